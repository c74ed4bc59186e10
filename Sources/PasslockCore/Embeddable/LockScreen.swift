/// The passcode screen's state machine, shared by the lock screen and the
/// set/change/remove flows. It counts digits but never holds them: the
/// controller keeps the secret and applies the `Effect`s this returns. Time is
/// passed in (monotonic milliseconds), so every transition is testable.
public struct LockScreen: Sendable, Equatable {
  public enum Flow: Sendable, Equatable {
    case unlock
    case create
    case change
    case remove
  }

  /// Which passcode the screen is asking for.
  public enum Step: Sendable, Equatable {
    case current
    case new
    case confirm
  }

  /// A line under the title explaining what just happened.
  public enum Notice: Sendable, Equatable {
    case wrongPasscode
    case mismatch
    case refused(String)
    case accountPasswordRequired
    /// The account password is asked for first (the root-held policy).
    case passwordFirst(PasswordFirst)
    case accountPasswordRejected(String)
    /// Nothing was checked: another process holds the store.
    case storeBusy
    /// The gatekeeper's status is not known (why): asked again after a
    /// moment; the screen stays locked meanwhile.
    case checking(String)
    /// The gatekeeper says no passcode is set: only the account password unlocks.
    case noPasscode
    /// The store cannot record an attempt: the passcode is not checked; the
    /// account password unlocks.
    case cannotRecord(UnwritableStore)

    /// Says what went wrong (in the error colour), not what is going on
    /// ("Checking…") or what comes first (password first).
    public var isError: Bool {
      switch self {
      case .checking(""), .passwordFirst: return false
      default: return true
      }
    }

    /// Says why only the account password opens the session: it stays while
    /// the password is typed.
    public var isStanding: Bool {
      switch self {
      case .accountPasswordRequired, .passwordFirst: return true
      default: return false
      }
    }
  }

  /// What the controller must do after an event.
  public enum Effect: Sendable, Equatable {
    case append(UInt8)
    case deleteLast
    case clearEntry
    case submit(Step)
    case bell
    case finish
    /// Open the account password field: start a PAM transaction.
    case startAccountPassword
    /// Close it again: cancel that transaction.
    case cancelAccountPassword
    /// Hand the typed password to the waiting PAM transaction.
    case submitAccountPassword
  }

  /// The controller's answer to a `.submit`.
  public enum Verdict: Sendable, Equatable {
    /// Go on to `step` (with its digit count, if known), or finish when nil.
    case accepted(next: Step?, length: Int?)
    case wrong(failures: Int, retryAfterSeconds: Int64, lockedOut: Bool)
    /// The two entries differ: back to the first entry, as the originals did.
    case mismatch
    case refused(String)
    case wait(seconds: Int64, failures: Int)
    case lockedOut(failures: Int)
    /// Not checked or counted: the account password must be used first.
    case passwordFirst(PasswordFirst)
    /// PAM refused the account password (its message).
    case passwordRejected(String)
    /// The store was busy: nothing was checked or counted; type it again.
    case busy
    /// The attempt could not be recorded (a full or read-only store):
    /// nothing was checked; the account password field opens.
    case unrecorded(UnwritableStore)
  }

  public static let shakeMilliseconds: Int64 = 300
  public static let revealMilliseconds: Int64 = 500

  public private(set) var flow: Flow
  public private(set) var step: Step
  /// The digit count that submits at once; nil when Enter must submit (a new passcode).
  public private(set) var length: Int?
  public private(set) var entered = 0
  public private(set) var notice: Notice?
  public private(set) var failedAttempts: Int
  /// The last typed digit, shown until `revealUntil`.
  public private(set) var revealedDigit: UInt8?
  public private(set) var revealUntil: Int64 = 0
  public private(set) var shakeStart: Int64?
  /// How many dots were filled when the shake began: they shake, then clear.
  public private(set) var shakeFilled = 0
  /// Monotonic deadline before which input is refused (a running delay).
  public private(set) var retryAt: Int64?
  public private(set) var lockedOut: Bool
  public private(set) var busy = false
  public private(set) var finished = false
  /// The account password field is open (Tab, or forced by a lockout).
  public private(set) var passwordMode = false
  /// The prompt PAM sent for the password ("Password: "), once it arrived.
  public var passwordPrompt: String?
  /// Only the lock screen offers the account password.
  public var offersAccountPassword: Bool { flow == .unlock }
  public var revealLastDigit: Bool
  private var submittedCount = 0

  public init(
    flow: Flow, length: Int?, failedAttempts: Int = 0, retryAfterSeconds: Int64 = 0, lockedOut: Bool = false,
    revealLastDigit: Bool = true, now: Int64
  ) {
    self.flow = flow
    self.step = flow == .create ? .new : .current
    self.length = flow == .create ? nil : length
    self.failedAttempts = failedAttempts
    self.lockedOut = lockedOut
    self.revealLastDigit = revealLastDigit
    if retryAfterSeconds > 0 { retryAt = now + retryAfterSeconds * 1000 }
    if lockedOut { notice = .accountPasswordRequired }
  }

  /// The unlock screen for the gatekeeper's `status` (cached or answered).
  public init(unlocking status: StoreStatus, revealLastDigit: Bool = true, now: Int64) {
    self.init(
      flow: .unlock, length: status.length, failedAttempts: status.failedAttempts,
      retryAfterSeconds: status.retryAfterSeconds, lockedOut: status.accountPasswordRequired,
      revealLastDigit: revealLastDigit, now: now)
    if let why = status.passwordFirst { notice = .passwordFirst(why) }
  }

  /// The unlock screen for what the gatekeeper's status says (StatusReading):
  /// the passcode screen for a passcode that is set; the account password
  /// when there is none or the store cannot be used (why shown); and while
  /// the status is not known, "Checking…" with why, no dots and no keys
  /// until it comes. Never a screen that gives the session back.
  public init(reading: StatusReading, revealLastDigit: Bool = true, now: Int64) {
    switch reading {
    case .passcodeSet(let status):
      self.init(unlocking: status, revealLastDigit: revealLastDigit, now: now)
    case .noPasscode:
      self.init(flow: .unlock, length: nil, lockedOut: true, revealLastDigit: revealLastDigit, now: now)
      notice = .noPasscode
    case .storeRefused(let why):
      self.init(flow: .unlock, length: nil, lockedOut: true, revealLastDigit: revealLastDigit, now: now)
      notice = .refused(why)
    case .gatekeeperUnavailable(let why), .unknown(let why):
      self.init(flow: .unlock, length: nil, revealLastDigit: revealLastDigit, now: now)
      notice = .checking(why)
    }
  }

  /// The gatekeeper gave no answer (why): said on the screen, which stays as
  /// it is (locked) until an answer comes.
  public mutating func statusUnknown(_ why: String) { notice = .checking(why) }

  /// Call once after creating a locked-out lock screen: opens the password field.
  public mutating func start() -> [Effect] {
    lockedOut && offersAccountPassword ? openPassword() : []
  }

  private mutating func openPassword() -> [Effect] {
    passwordMode = true
    passwordPrompt = nil
    entered = 0
    revealedDigit = nil
    return [.clearEntry, .startAccountPassword]
  }

  /// True while keys are refused: checking, shaking, waiting, locked out or done.
  public func refusesInput(now: Int64) -> Bool {
    if passwordMode { return busy || finished }
    return busy || finished || lockedOut || isShaking(now: now) || secondsUntilRetry(now: now) > 0
  }

  public func isShaking(now: Int64) -> Bool {
    guard let shakeStart else { return false }
    return now - shakeStart < Self.shakeMilliseconds
  }

  /// The horizontal offset of the dots row during the shake.
  public func shakeOffset(now: Int64) -> Int {
    guard let shakeStart, isShaking(now: now) else { return 0 }
    let offsets = [3, -3, 2, -2, 1, 0]
    let index = Int((now - shakeStart) * Int64(offsets.count) / Self.shakeMilliseconds)
    return offsets[min(index, offsets.count - 1)]
  }

  public func secondsUntilRetry(now: Int64) -> Int64 {
    guard let retryAt, retryAt > now else { return 0 }
    return (retryAt - now + 999) / 1000
  }

  public func visibleDigit(now: Int64) -> UInt8? {
    revealLastDigit && now < revealUntil ? revealedDigit : nil
  }

  // MARK: Events

  public mutating func key(_ key: InputParser.Key, now: Int64) -> [Effect] {
    if passwordMode { return passwordKey(key) }
    // The account password is offered even while a delay runs or after a lockout.
    if key == .alternate && offersAccountPassword && !busy && !finished { return openPassword() }
    if refusesInput(now: now) { return [] }
    switch key {
    case .digit(let digit):
      guard entered < PasscodePolicy.lengths.upperBound else { return [.bell] }
      entered += 1
      revealedDigit = digit
      revealUntil = now + Self.revealMilliseconds
      if let standing = notice, !standing.isStanding { notice = nil }
      var effects: [Effect] = [.append(0x30 + digit)]
      if let length, entered >= length { effects += submit() }
      return effects
    case .delete:
      guard entered > 0 else { return [] }
      entered -= 1
      revealedDigit = nil
      return [.deleteLast]
    case .clear:
      guard entered > 0 else { return [] }
      entered = 0
      revealedDigit = nil
      return [.clearEntry]
    case .enter:
      guard entered >= PasscodePolicy.lengths.lowerBound, length == nil || entered == length else { return [.bell] }
      return submit()
    case .click, .text, .alternate, .escape:
      return []  // clicks are mapped to keys by the controller; letters are not digits
    }
  }

  /// Keys in the account password field: any printable byte is part of the
  /// password; Enter submits; Esc or Tab go back to the passcode (not after a lockout).
  private mutating func passwordKey(_ key: InputParser.Key) -> [Effect] {
    if busy || finished { return [] }
    switch key {
    case .digit(let d):
      return appendPassword(0x30 + d)
    case .text(let byte):
      return appendPassword(byte)
    case .delete:
      guard entered > 0 else { return [] }
      entered -= 1
      return [.deleteLast]
    case .clear:
      entered = 0
      return [.clearEntry]
    case .enter:
      guard entered > 0 else { return [.bell] }
      busy = true
      return [.submitAccountPassword]
    case .escape, .alternate:
      guard !lockedOut else { return [.bell] }
      passwordMode = false
      entered = 0
      if let standing = notice, !standing.isStanding { notice = nil }
      return [.clearEntry, .cancelAccountPassword]
    case .click:
      return []
    }
  }

  /// PAM asks for another answer after the first (a second factor): let the
  /// user type again.
  public mutating func awaitNextPassword() {
    busy = false
    entered = 0
  }

  private mutating func appendPassword(_ byte: UInt8) -> [Effect] {
    guard entered < 255 else { return [.bell] }
    entered += 1
    return [.append(byte)]
  }

  private mutating func submit() -> [Effect] {
    busy = true
    submittedCount = entered
    revealedDigit = nil
    return [.submit(step)]
  }

  /// The controller reports the outcome of a `.submit`.
  public mutating func verdict(_ verdict: Verdict, now: Int64) -> [Effect] {
    busy = false
    entered = 0
    switch verdict {
    case .accepted(let next, let nextLength):
      notice = nil
      failedAttempts = 0
      guard let next else {
        finished = true
        return [.clearEntry, .finish]
      }
      step = next
      length = nextLength
      return [.clearEntry]
    case .wrong(let failures, let retryAfterSeconds, let lockedOut):
      failedAttempts = failures
      self.lockedOut = lockedOut
      if retryAfterSeconds > 0 { retryAt = now + retryAfterSeconds * 1000 }
      let effects = reject(lockedOut ? .accountPasswordRequired : .wrongPasscode, now: now)
      // After the tenth failure only the account password opens the session.
      return lockedOut && offersAccountPassword ? effects + openPassword() : effects
    case .mismatch:
      step = .new
      length = nil
      return reject(.mismatch, now: now)
    case .refused(let reason):
      return reject(.refused(reason), now: now)
    case .wait(let seconds, let failures):
      failedAttempts = failures
      retryAt = now + seconds * 1000
      return [.clearEntry]
    case .lockedOut(let failures):
      failedAttempts = failures
      lockedOut = true
      notice = .accountPasswordRequired
      return offersAccountPassword ? openPassword() : [.clearEntry]
    case .passwordFirst(let why):
      lockedOut = true
      notice = .passwordFirst(why)
      return offersAccountPassword ? openPassword() : [.clearEntry]
    case .busy:
      // Not a wrong passcode: no shake, nothing counted.
      notice = .storeBusy
      return [.clearEntry, .bell]
    case .unrecorded(let reason):
      // Nothing checked or counted: no shake; the password needs no write.
      notice = .cannotRecord(reason)
      return [.bell] + openPassword()
    case .passwordRejected(let message):
      notice = .accountPasswordRejected(message)
      passwordPrompt = nil
      return [.clearEntry, .bell, .startAccountPassword]
    }
  }

  private mutating func reject(_ notice: Notice, now: Int64) -> [Effect] {
    self.notice = notice
    shakeFilled = submittedCount
    shakeStart = now
    return [.clearEntry, .bell]
  }
}
