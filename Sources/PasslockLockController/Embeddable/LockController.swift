import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// The passcode screen's controller, shared by the terminal lock screen and
/// the Wayland one: drives `LockScreen` with the keys a front end reads,
/// holds what is typed (a `Secret`), and runs every gatekeeper request
/// without blocking the drawing: the passcode check, the account password's
/// PAM transaction (its prompts relayed), the external authenticator running
/// while you type, and the status that replaces a first frame drawn from
/// StatusCache. The front end polls `watched` beside its own input, reports
/// what became readable, and draws `screen` and `context` after each round.
public final class LockController {
  /// A gatekeeper request the front end polls for.
  public enum Request: Sendable {
    case verify, accountPassword, external, status
  }

  public let gatekeeper: GatekeeperClient
  public let texts: Texts
  public let allowSimple: Bool
  public var screen: LockScreen
  public var context: LockRenderer.Context
  /// Rings the bell (a wrong passcode, a full entry): the terminal's BEL.
  public var bell: () -> Void = {}

  /// What is being typed, and the entries accepted so far (current, new).
  public var entry = Secret()
  public var first = Secret()
  public var second = Secret()

  /// The terminal the user is at, handed to the gatekeeper for PAM_TTY; nil
  /// where there is none (a Wayland session).
  let terminal: Int32?
  private var pending: PendingRequest?
  /// The account password's PAM transaction, run by the gatekeeper.
  private var passwordRequest: PendingRequest?
  /// PAM has asked for the password and waits for our answer.
  private var promptWaiting = false

  /// The external authenticator's settings, when configured.
  let external: ExternalSettings?
  /// Its PAM transaction in the gatekeeper, running beside passcode entry.
  private var externalRequest: PendingRequest?
  /// When it starts by itself (monotonic ms), once offered with AutoStart.
  private var externalStartAt: Int64?

  /// Grace (passlockd's, after an idle lock only): until then (monotonic
  /// ms) any input gives the session back with no gatekeeper, no PAM call
  /// and nothing counted. Ended by SIGUSR1 (passlockd, as a sleep begins),
  /// and by any suspend since it began (`suspendedAtGrace`).
  private var graceUntil: Int64?
  private var suspendedAtGrace: Int64 = 0

  /// The status on screen is not the gatekeeper's yet (drawn from
  /// StatusCache, or not known at all): no key is read until its answer
  /// has replaced it. Never ends the lock screen: without an answer it is
  /// asked again after a growing delay (`RetryDelay`).
  private var confirming = false
  /// That status request, running, and when it was started (monotonic ms).
  private var unconfirmed: (request: PendingRequest, since: Int64)?
  /// When it is asked again, after `statusFailures` requests without an answer.
  private var statusRetryAt: Int64?
  private var statusFailures = 0
  /// When the passcode check in flight was started (monotonic ms).
  private var pendingSince: Int64 = 0

  /// How long a status request may take before it counts as no answer
  /// (a gatekeeper stopped by the user's own SIGSTOP), and a passcode check.
  public static let statusDeadlineMilliseconds: Int64 = 5_000
  public static let verifyDeadlineMilliseconds: Int64 = 10_000

  public init(
    gatekeeper: GatekeeperClient, screen: LockScreen, context: LockRenderer.Context, texts: Texts, terminal: Int32?,
    allowSimple: Bool = false, external: ExternalSettings? = nil
  ) {
    self.gatekeeper = gatekeeper
    self.screen = screen
    self.context = context
    self.texts = texts
    self.terminal = terminal
    self.allowSimple = allowSimple
    self.external = external
  }

  /// Monotonic milliseconds, the clock `LockScreen` runs on.
  public static func now() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }

  /// Call once, before the first frame (a locked-out screen opens the password field).
  public func start() { apply(screen.start()) }

  // MARK: Grace

  /// Starts the grace of an idle lock, before the first frame (and before
  /// `offerExternal`: the external authenticator waits for its end). Not
  /// where only the account password opens (a lockout, password first):
  /// there a key must not skip what the policy asks for.
  public func beginGrace(milliseconds: Int64) {
    guard milliseconds > 0, screen.flow == .unlock, !screen.lockedOut else { return }
    graceUntil = Self.now() + milliseconds
    suspendedAtGrace = suspendedNanoseconds()
  }

  /// No grace from now on (a sleep begins).
  public func endGrace() { graceUntil = nil }

  /// Whether input now gives the session back: within the grace, and no
  /// suspend since it began (a sleep ends it locked even if nobody said so).
  public func inGrace(now: Int64) -> Bool {
    guard let until = graceUntil, now < until, suspendedNanoseconds() < suspendedAtGrace + 1_000_000_000 else {
      graceUntil = nil
      return false
    }
    return true
  }

  /// Input (a key, a click) within the grace: the session is given back.
  /// True when it was; the front end shows nothing more and ends. The
  /// front ends call it where input arrives, before it becomes keys (a
  /// letter or Shift maps to no key on the keypad, yet is input).
  @discardableResult
  public func releaseInGrace(now: Int64) -> Bool {
    guard inGrace(now: now), !screen.finished else { return false }
    graceUntil = nil
    externalStartAt = nil
    apply(screen.verdict(.accepted(next: nil, length: nil), now: now))
    return true
  }

  /// Ends every request: the loser of a race is stopped before it can count
  /// anything; a passcode check already counted its attempt.
  public func end() {
    passwordRequest?.cancel()
    externalRequest?.cancel()
    // A check in flight counted its attempt before it hashed: ending it
    // loses nothing, and a stopped one must not hold up the unlock.
    pending?.cancel()
    unconfirmed?.request.cancel()  // a status read has nothing to lose
    passwordRequest = nil
    externalRequest = nil
    pending = nil
    unconfirmed = nil
  }

  /// True while the status on screen is not the gatekeeper's yet: keys wait
  /// (unread) until its answer has replaced it.
  public var awaitsStatus: Bool { confirming }

  /// The descriptors to poll for reading, each with the request it answers.
  public var watched: [(fd: Int32, request: Request)] {
    var list: [(fd: Int32, request: Request)] = []
    if let pending { list.append((pending.output.rawValue, .verify)) }
    if let passwordRequest { list.append((passwordRequest.output.rawValue, .accountPassword)) }
    if let externalRequest { list.append((externalRequest.output.rawValue, .external)) }
    if let unconfirmed { list.append((unconfirmed.request.output.rawValue, .status)) }
    return list
  }

  /// The requests whose descriptors poll reported.
  public func answered(_ requests: [Request]) {
    if requests.contains(.status) { statusArrived() }
    if requests.contains(.verify), let request = pending {
      pending = nil
      apply(screen.verdict(verdict(request), now: Self.now()))
    }
    if requests.contains(.accountPassword) { passwordFrameArrived() }
    if requests.contains(.external) { externalFrameArrived() }
  }

  /// Timers: the external authenticator's automatic start, the status asked
  /// again, and requests past their deadline (a stopped gatekeeper).
  public func tick(now: Int64) {
    if let at = externalStartAt, now >= at {
      externalStartAt = nil
      startExternal()
    }
    if let at = statusRetryAt, now >= at { askForStatus() }
    if let (request, since) = unconfirmed, now - since >= Self.statusDeadlineMilliseconds {
      request.cancel()
      unconfirmed = nil
      settle(.unknown("no answer in \(Self.statusDeadlineMilliseconds / 1000) s"))
    }
    if let request = pending, now - pendingSince >= Self.verifyDeadlineMilliseconds {
      request.cancel()
      pending = nil
      apply(screen.verdict(.refused(texts.checkFailed), now: now))
    }
  }

  /// Milliseconds until something on screen changes by itself: the clock's
  /// next minute, the revealed digit, the shake, the delay's countdown, the
  /// external authenticator's start.
  public func timeout(now: Int64) -> Int64 {
    var wait: Int64 = 60_000 - (Int64(wallClockSeconds()) % 60) * 1000
    if screen.visibleDigit(now: now) != nil { wait = min(wait, screen.revealUntil - now) }
    if screen.isShaking(now: now) { wait = min(wait, 50) }
    if screen.secondsUntilRetry(now: now) > 0 { wait = min(wait, 1000 - (screen.retryAt.map { $0 - now } ?? 0) % 1000) }
    if let at = externalStartAt { wait = min(wait, at - now) }
    if let at = statusRetryAt { wait = min(wait, at - now) }
    if let since = unconfirmed?.since { wait = min(wait, since + Self.statusDeadlineMilliseconds - now) }
    if pending != nil { wait = min(wait, pendingSince + Self.verifyDeadlineMilliseconds - now) }
    return wait
  }

  // MARK: Keys

  /// A key the front end read (a click already mapped by `press(keypad:)`).
  public func press(_ key: InputParser.Key, now: Int64) {
    // Space starts the external authenticator too, outside the password field.
    if key == .text(0x20) && !screen.passwordMode && context.externalKey != nil {
      startExternal()
      return
    }
    apply(screen.key(key, now: now))
  }

  /// A keypad key clicked or tapped.
  public func press(keypad key: LockRenderer.KeypadKey, now: Int64) {
    switch key {
    case .digit(let d): apply(screen.key(.digit(d), now: now))
    case .delete: apply(screen.key(.delete, now: now))
    case .external: startExternal()
    }
  }

  private func apply(_ effects: [LockScreen.Effect]) {
    for effect in effects {
      switch effect {
      case .append(let byte): entry.append(byte)
      case .deleteLast: entry.removeLast()
      case .clearEntry: entry.clear()
      case .bell: bell()
      case .finish: break
      case .submit(let step): submit(step)
      case .startAccountPassword: startAccountPassword()
      case .cancelAccountPassword:
        passwordRequest?.cancel()
        passwordRequest = nil
        promptWaiting = false
        context.pamMessage = nil
      case .submitAccountPassword:
        if promptWaiting { answerPrompt() }  // otherwise answered when the prompt arrives
      }
    }
  }

  // MARK: A first frame before the gatekeeper's answer

  /// The screen was drawn from a cached status, or with none (`failures`
  /// requests went unanswered already): once the first frame is up the
  /// gatekeeper is asked (`askForStatus`), and again until it answers.
  public func awaitStatus(failures: Int = 0) {
    confirming = true
    statusFailures = failures
  }

  /// After the first frame, and on each retry: asks the gatekeeper for the
  /// status on screen (asked only then, so that it does not compete with
  /// the frame). A request that cannot start is answered by a retry.
  public func askForStatus() {
    guard confirming, unconfirmed == nil else { return }
    statusRetryAt = nil
    do { unconfirmed = (try gatekeeper.start(.status), Self.now()) } catch { settle(StatusReading(error)) }
  }

  private func statusArrived() {
    guard let (request, _) = unconfirmed else { return }
    unconfirmed = nil
    let answer: Result<AuthResult, ClientError>
    do { answer = .success(try request.finish { _, _, _ in false }) } catch { answer = .failure(error) }
    settle(UnlockStatus.read(answer))
  }

  /// The gatekeeper's reading replaces the screen drawn before it (nothing
  /// was typed yet). No answer keeps the screen, says why, and asks again.
  private func settle(_ reading: StatusReading) {
    let now = Self.now()
    switch reading {
    case .unknown(let why), .gatekeeperUnavailable(let why):
      statusFailures += 1
      statusRetryAt = now + RetryDelay.milliseconds(afterFailures: statusFailures)
      screen.statusUnknown(why)
      return
    case .passcodeSet, .noPasscode, .storeRefused:
      break
    }
    confirming = false
    statusFailures = 0
    screen = LockScreen(reading: reading, revealLastDigit: screen.revealLastDigit, now: now)
    // The gatekeeper says only the account password opens: no grace either.
    if screen.lockedOut { graceUntil = nil }
    if let user = reading.status?.user { context.userAtHost = userAtHost(user) }
    if case .passcodeSet(let status) = reading, status.externalRefusal.isEmpty {
      offerExternal()
    } else {
      context.externalKey = nil
      externalStartAt = nil
    }
    apply(screen.start())
  }

  // MARK: External authenticator

  /// Shows its key and, with AutoStart, arms it after the delay (the owner is
  /// still in front of the screen as it locks). While a screen drawn from
  /// the cache awaits the gatekeeper's confirmation it only shows it; the
  /// confirmation arms it.
  public func offerExternal() {
    guard let external, screen.flow == .unlock, !screen.lockedOut else { return }
    context.externalKey = external.label
    if !confirming && external.autoStart && externalStartAt == nil && externalRequest == nil {
      // Never during a grace: it would light up (or unlock) for nothing.
      externalStartAt = max(Self.now() + external.armDelayMilliseconds, graceUntil ?? 0)
    }
  }

  private func startExternal() {
    guard externalRequest == nil, context.externalKey != nil, !screen.finished, !inGrace(now: Self.now()) else { return }
    externalStartAt = nil
    do { externalRequest = try gatekeeper.start(.external, terminal: terminal) } catch {
      context.pamMessage = error.description
    }
  }

  private func externalFrameArrived() {
    guard let request = externalRequest else { return }
    do {
      switch try request.nextFrame() {
      case .message(_, let text), .prompt(_, let text):
        context.pamMessage = text  // "Place your finger on the reader"
      case .result(let result):
        externalRequest = nil
        request.abandon()
        switch result.code {
        case .ok:
          // The first success wins; a passcode check in flight finishes on exit.
          context.pamMessage = nil
          apply(screen.verdict(.accepted(next: nil, length: nil), now: Self.now()))
        case .externalFailed:
          context.pamMessage = texts.externalNotRecognized
        case .externalUnavailable, .externalDisabled, .noPasscode:
          context.externalKey = nil  // not available here: the key goes
          context.pamMessage = result.message
        case .storeBusy:
          context.pamMessage = texts.storeBusy
        default:
          context.pamMessage = result.message
        }
      }
    } catch {
      externalRequest = nil
      request.cancel()
      context.externalKey = nil
    }
  }

  // MARK: Account password

  /// The gatekeeper runs the `passlock` PAM service; its prompts and messages
  /// come back over the pipe while the screen keeps drawing.
  private func startAccountPassword() {
    passwordRequest?.cancel()
    promptWaiting = false
    do {
      passwordRequest = try gatekeeper.start(.accountPassword, terminal: terminal)
    } catch {
      passwordRequest = nil
      context.pamMessage = error.description
    }
  }

  private func passwordFrameArrived() {
    guard let request = passwordRequest else { return }
    do {
      switch try request.nextFrame() {
      case .prompt(let style, let text) where style == .secret || style == .visible:
        screen.passwordPrompt = text
        promptWaiting = true
        if screen.busy {
          if entry.isEmpty { screen.awaitNextPassword() } else { answerPrompt() }
        }
      case .message(_, let text), .prompt(_, let text):
        // PAM's info and error messages ("Password expired", faillock's count).
        context.pamMessage = text
      case .result(let result):
        passwordRequest = nil
        request.abandon()
        if result.code == .ok {
          apply(screen.verdict(.accepted(next: nil, length: nil), now: Self.now()))
        } else {
          apply(screen.verdict(.passwordRejected(result.message ?? ""), now: Self.now()))
        }
      }
    } catch {
      passwordRequest = nil
      request.cancel()
      apply(screen.verdict(.passwordRejected(error.description), now: Self.now()))
    }
  }

  private func answerPrompt() {
    guard let request = passwordRequest else { return }
    promptWaiting = false
    do { try request.answer(entry) } catch { context.pamMessage = error.description }
    entry.clear()
  }

  // MARK: Submitting

  private func submit(_ step: LockScreen.Step) {
    let now = Self.now()
    switch (screen.flow, step) {
    case (_, .current):
      // The gatekeeper hashes for ~100 ms: ask without blocking the screen.
      do {
        pending = try gatekeeper.start(.verify) { (channel) throws(SystemError) in
          try channel.send(.secret, secret: entry)
        }
        pendingSince = now
      } catch {
        apply(screen.verdict(.refused(texts.checkFailed), now: now))
      }
    case (_, .new):
      let violation = entry.withBytes { PasscodePolicy.check($0, allowSimple: allowSimple) }
      if let violation {
        apply(screen.verdict(.refused(refusal(violation)), now: now))
      } else {
        second.replace(with: entry)
        apply(screen.verdict(.accepted(next: .confirm, length: entry.count), now: now))
      }
    case (_, .confirm):
      let same = second.withBytes { entry.constantTimeEquals($0) }
      if !same { second.clear() }
      apply(screen.verdict(same ? .accepted(next: nil, length: nil) : .mismatch, now: now))
    }
  }

  private func refusal(_ violation: PasscodePolicy.Violation) -> String {
    let text = violation.description
    return text.prefix(1).uppercased() + text.dropFirst()
  }

  /// Turns the gatekeeper's answer to a verify into the screen's verdict.
  private func verdict(_ request: PendingRequest) -> LockScreen.Verdict {
    let result: AuthResult
    do { result = try request.finish { _, _, _ in false } } catch { return .refused(texts.checkFailed) }
    switch VerifyOutcome(result) {
    case .accepted:
      first.replace(with: entry)
      switch screen.flow {
      case .change: return .accepted(next: .new, length: nil)
      case .unlock, .create, .remove: return .accepted(next: nil, length: nil)
      }
    case .wrong(let failures, let retry, let required):
      return .wrong(failures: failures, retryAfterSeconds: retry, lockedOut: required)
    case .delayed(let retry): return .wait(seconds: retry, failures: screen.failedAttempts)
    case .accountPasswordRequired: return .lockedOut(failures: max(screen.failedAttempts, AttemptPolicy.lockoutFailures))
    case .passwordFirst(let why): return .passwordFirst(why)
    case .failed(.storeBusy, _): return .busy
    case .failed(.storeUnwritable, _):
      return .unrecorded(result.fields[UnwritableStore.field].flatMap(UnwritableStore.init(rawValue:)) ?? .full)
    case .failed(let code, let message): return .refused(message ?? "passlock-auth failed (\(code))")
    }
  }
}
