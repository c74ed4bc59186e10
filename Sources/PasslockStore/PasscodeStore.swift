import Glibc
import PasslockCore
import PasslockPOSIX

/// Where a user's store lives and who must own it.
public struct StoreLocation: Sendable, Equatable {
  public var kind: StoreStatus.Kind
  public var directory: String
  /// root for the system store, the user for their own.
  public var owner: uid_t

  public init(kind: StoreStatus.Kind, directory: String, owner: uid_t) {
    self.kind = kind
    self.directory = directory
    self.owner = owner
  }
}

/// One user's passcode hash and attempt counter, and the rules that bind them:
/// the counter is persisted before every check, delays live in the file, and
/// a counter that cannot be read means "account password required".
public struct PasscodeStore: ~Copyable {
  public static let passcodeFile = "passcode"
  public static let attemptsFile = "attempts"
  /// The account password succeeded while the store was busy: the counter is
  /// cleared by the next process that holds the lock (ClearingAttempts).
  public static let pendingClearFile = "clear-pending"

  public let location: StoreLocation
  let directory: SecureDirectory
  /// yescrypt cost for new hashes; nil calibrates to 90–135 ms on this machine.
  public var hashCost: Int?

  /// Opens the store. With `create` false, a missing directory gives nil.
  public init?(_ location: StoreLocation, create: Bool, hashCost: Int? = nil) throws(StoreFileError) {
    do {
      directory = try SecureDirectory(path: location.directory, owner: location.owner, create: create)
    } catch {
      if case .missing = error, !create { return nil }
      throw error
    }
    self.location = location
    self.hashCost = hashCost
  }

  // MARK: Reading

  public func passcode() throws(StoreFileError) -> PasscodeRecord? {
    guard let text = try directory.read(Self.passcodeFile) else { return nil }
    do { return try PasscodeRecord.parse(text) } catch {
      throw .malformed(location.directory + "/" + Self.passcodeFile, reason: error.reason)
    }
  }

  /// The counter, or why it cannot be trusted.
  public enum Attempts {
    case record(AttemptRecord)
    case unusable(String)
  }

  /// The counter as it stands: a pending clear (the account password
  /// accepted while the store was busy) already counts.
  public func attempts() -> Attempts {
    let stored = storedAttempts()
    guard clearIsPending else { return stored }
    switch stored {
    case .record(let record): return .record(record.clearingFailures())
    case .unusable: return .record(.cleared)
    }
  }

  /// The counter file itself.
  func storedAttempts() -> Attempts {
    do {
      guard let text = try directory.read(Self.attemptsFile) else { return .record(.cleared) }
      return .record(try AttemptRecord.parse(text))
    } catch let error as StoreFileError {
      return .unusable(error.description)
    } catch {
      return .unusable("\(location.directory)/\(Self.attemptsFile) is corrupt (\((error as? RecordFormatError)?.reason ?? "\(error)"))")
    }
  }

  var clearIsPending: Bool { (try? directory.read(Self.pendingClearFile)) != nil }

  /// `passwordFirst`: the root-held policy; when it asks for the account
  /// password, the status says so (and why) as a lockout would.
  public func status(now: Int64, user: String, passwordFirst policy: PasswordFirstPolicy = .off) throws(StoreFileError)
    -> StoreStatus
  {
    let record = try passcode()
    var failures = 0
    var wait: Int64 = 0
    var lockedOut = false
    var passwordFirst: PasswordFirst?
    // One read of the counter and the boot id for every answer below.
    let counter = attempts()
    let boot = BootID.current()
    switch counter {
    case .unusable: lockedOut = true
    case .record(let attempts):
      failures = attempts.failures
      switch attempts.gate(now: now) {
      case .open: break
      case .wait(let seconds): wait = seconds
      case .accountPasswordRequired: lockedOut = true
      }
      passwordFirst = attempts.passwordFirst(policy, now: now, boot: boot)
    }
    let required = (lockedOut || passwordFirst != nil) && record != nil
    return StoreStatus(
      passcodeSet: record != nil, length: record?.length ?? 0, failedAttempts: failures,
      retryAfterSeconds: wait, accountPasswordRequired: required,
      store: location.kind, directory: location.directory, user: user,
      externalRefusal: record == nil
        ? "no passcode is set" : Self.externalRefusal(counter, now: now, boot: boot, passwordFirst: policy) ?? "",
      passwordFirst: record == nil ? nil : passwordFirst)
  }

  // MARK: Verifying

  /// Checks `candidate`, counting the try on disk (fsynced) *before* the hash
  /// is computed, so killing the process mid-check cannot save an attempt.
  ///
  /// Other processes (lock screens, PAM hosts) verify concurrently: every
  /// read-modify-write of the counter happens under the store's lock, and the
  /// lock is never held while hashing (a stopped process must not block the
  /// owner's lock screen for longer than one file write).
  ///
  /// Under the `passwordFirst` policy, while it asks for the account password,
  /// nothing is checked or counted.
  public func verify(
    _ candidate: borrowing Secret, now: Int64, boot: String? = nil, passwordFirst policy: PasswordFirstPolicy = .off
  ) throws(StoreError) -> VerifyOutcome {
    guard let record = try wrap({ () throws(StoreFileError) in try passcode() }) else { return .failed(.noPasscode, message: nil) }
    // Read once, and only where it matters (password first; a success).
    var knownBoot = boot
    let counted: Result<AttemptRecord, Refusal> = try exclusively { () throws(StoreError) in
      let previous: AttemptRecord
      switch storedAttempts() {
      case .unusable(let reason): return .failure(.accountPasswordRequired(reason))
      case .record(let attempts): previous = attempts
      }
      if policy.afterBoot && knownBoot == nil { knownBoot = BootID.current() }
      if let why = previous.passwordFirst(policy, now: now, boot: knownBoot ?? "") { return .failure(.passwordFirst(why)) }
      switch previous.gate(now: now) {
      case .open: break
      case .wait(let seconds): return .failure(.wait(seconds))
      case .accountPasswordRequired: return .failure(.accountPasswordRequired(nil))
      }
      let counted = previous.countingAttempt(now: now)
      try write(counted)
      return .success(counted)
    }
    let lastWrong: String
    switch counted {
    case .failure(.wait(let seconds)): return .delayed(retryAfterSeconds: seconds)
    case .failure(.accountPasswordRequired(let reason)): return .accountPasswordRequired(reason: reason)
    case .failure(.passwordFirst(let why)): return .passwordFirst(why)
    case .success(let record): lastWrong = record.lastWrongHash
    }

    let computed: String
    do { computed = try PasscodeHasher.crypt(candidate, setting: record.hash) } catch { throw .hash(error) }

    return try exclusively { () throws(StoreError) -> VerifyOutcome in
      // Re-read: other tries may have been counted while we hashed.
      guard case .record(var current) = storedAttempts() else { return .accountPasswordRequired(reason: nil) }
      if ConstantTime.equals(computed, record.hash) {
        // The boot id matters only on success: read it then, not on every
        // try. A success the store cannot record (the disk filled since the
        // count) is still one: the count keeps this attempt, never fewer.
        do throws(StoreError) { try write(current.succeeded(now: now, boot: knownBoot ?? BootID.current())) } catch {
          guard error.unwritable != nil else { throw error }
        }
        return .accepted
      }
      if !lastWrong.isEmpty && ConstantTime.equals(computed, lastWrong) {
        // The same wrong passcode twice in a row counts once, as on iOS: take
        // back our own count only, never overwrite what others counted.
        current.failures = max(0, current.failures - 1)
      } else {
        current.lastWrongHash = computed
      }
      try write(current)
      let next = current.gate(now: now)
      var retry: Int64 = 0
      if case .wait(let seconds) = next { retry = seconds }
      return .wrong(failures: current.failures, retryAfterSeconds: retry, accountPasswordRequired: next == .accountPasswordRequired)
    }
  }

  enum Refusal: Error {
    case wait(Int64)
    case accountPasswordRequired(String?)
    case passwordFirst(PasswordFirst)
  }

  /// Runs `body` holding the store's lock (flock on its directory, waited
  /// for at most SecureDirectory.lockDeadlineSeconds: then `.busy`). A clear
  /// left pending is carried out first; bodies read the counter as stored
  /// (`storedAttempts`), so a clear recorded while they run cannot make a
  /// count of theirs vanish when it is carried out later.
  func exclusively<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    try wrap { () throws(StoreFileError) in try directory.lock() }
    defer { directory.unlock() }
    if clearIsPending {
      switch storedAttempts() {
      case .record(let record): try write(record.clearingFailures())
      case .unusable: try write(.cleared)
      }
      try wrap { () throws(StoreFileError) in try directory.remove(Self.pendingClearFile) }
    }
    return try body()
  }

  // MARK: Changing

  /// Stores a new passcode (already checked against the policy) and clears
  /// the counter. The account password's last use stays, or is now when it
  /// was just used (`accountPasswordUsed`) to allow this.
  public func setPasscode(_ passcode: borrowing Secret, accountPasswordUsed: Bool = false) throws(StoreError) {
    let hash: String
    do throws(HashError) {
      if let hashCost {
        hash = try PasscodeHasher.hash(passcode, cost: hashCost)
      } else {
        hash = try PasscodeHasher.calibratedHash(passcode)
      }
    } catch { throw .hash(error) }
    let record = PasscodeRecord(length: passcode.count, hash: hash)
    try exclusively { () throws(StoreError) in
      try wrap { () throws(StoreFileError) in try directory.replace(Self.passcodeFile, with: record.serialized()) }
      var previous = AttemptRecord.cleared
      if case .record(let stored) = storedAttempts() { previous = stored }
      let now = wallClockSeconds()
      let boot = BootID.current()
      if accountPasswordUsed { previous = previous.afterAccountPassword(now: now, boot: boot) }
      try write(previous.succeeded(now: now, boot: boot))
    }
  }

  public func removePasscode() throws(StoreError) {
    try exclusively { () throws(StoreError) in
      try wrap { () throws(StoreFileError) in
        try directory.remove(Self.passcodeFile)
        try directory.remove(Self.attemptsFile)
      }
    }
  }

  /// Whether `error` is the store's lock held past its deadline.
  public static func isBusy(_ error: StoreError) -> Bool {
    if case .file(.busy) = error { return true }
    return false
  }

  /// After the account password: the counter starts again from zero, and
  /// when it was the password itself (`passwordUsed`: not a finger or the
  /// passcode through the same PAM stack) its use is recorded (password
  /// first). When the store is busy
  /// (ClearingAttempts.deferred) the clear is recorded in a file of its own,
  /// written without the lock (an atomic rename), counted by every reader
  /// from then on and carried out by the next holder of the lock: the
  /// password that was accepted still opens the lock screen. That deferred
  /// clear does not record the password's use (it may be carried out in a
  /// later boot): password first then asks for it once more.
  @discardableResult
  public func clearAttempts(
    passwordUsed: Bool = true, now: Int64 = wallClockSeconds(), boot: String = BootID.current()
  ) throws(StoreError) -> ClearingAttempts {
    do {
      try exclusively { () throws(StoreError) in
        var record = AttemptRecord.cleared
        if case .record(let stored) = storedAttempts() { record = stored }
        try write(passwordUsed ? record.afterAccountPassword(now: now, boot: boot) : record.clearingFailures())
      }
      return .cleared
    } catch .file(.busy) {
      try wrap { () throws(StoreFileError) in
        try directory.replace(Self.pendingClearFile, with: "\(wallClockSeconds())\n")
      }
      return .deferred
    }
  }

  public enum ClearingAttempts: Equatable {
    case cleared
    /// Recorded, carried out once the store's lock is free.
    case deferred
  }

  /// The external authenticator's verdict on this store: nil when it may run.
  public func externalRefusal(
    now: Int64, boot: String = BootID.current(), passwordFirst policy: PasswordFirstPolicy = .off
  ) -> String? {
    Self.externalRefusal(attempts(), now: now, boot: boot, passwordFirst: policy)
  }

  static func externalRefusal(_ counter: Attempts, now: Int64, boot: String, passwordFirst policy: PasswordFirstPolicy) -> String? {
    switch counter {
    case .unusable(let reason): return reason
    case .record(let record):
      if record.passwordFirst(policy, now: now, boot: boot) != nil { return "the account password is needed first" }
      return record.externalRefusal(now: now, boot: boot)
    }
  }

  /// The account password was used elsewhere (a root PAM host's login,
  /// checked against the shadow entry there): recorded for password first;
  /// the passcode's counter is left as it is.
  public func recordAccountPassword(now: Int64 = wallClockSeconds(), boot: String = BootID.current()) throws(StoreError) {
    try exclusively { () throws(StoreError) in
      guard case .record(let record) = storedAttempts() else { return }
      try write(record.usingPassword(now: now, boot: boot))
    }
  }

  /// Counts one failure of the external authenticator, or (`by: -1`) gives
  /// back one counted for an attempt that did not fail.
  public func countExternalFailure(by delta: Int = 1) throws(StoreError) {
    try exclusively { () throws(StoreError) in
      guard case .record(var record) = storedAttempts() else { return }
      record.externalFailures = max(0, record.externalFailures + delta)
      try write(record)
    }
  }

  /// The external authenticator unlocked: the counters reset as after a
  /// passcode success, but not the 48-hour clock, which only the passcode
  /// itself restarts (as on iOS).
  public func externalSucceeded() throws(StoreError) {
    try exclusively { () throws(StoreError) in
      guard case .record(let record) = storedAttempts() else { return }
      try write(record.afterExternalSuccess())
    }
  }

  func write(_ record: AttemptRecord) throws(StoreError) {
    try wrap { () throws(StoreFileError) in try directory.replace(Self.attemptsFile, with: record.serialized()) }
  }

  func wrap<T>(_ body: () throws(StoreFileError) -> T) throws(StoreError) -> T {
    do { return try body() } catch { throw .file(error) }
  }
}

public enum StoreError: Error, CustomStringConvertible {
  case file(StoreFileError)
  case hash(HashError)
  public var description: String {
    switch self {
    case .file(let e): return e.description
    case .hash(let e): return e.description
    }
  }

  /// A write the file system refused for want of space or for being
  /// read-only: nothing the store holds is wrong, it just cannot change.
  public var unwritable: UnwritableStore? {
    guard case .file(.system(let error)) = self else { return nil }
    return UnwritableStore(errno: error.errno)
  }
}

/// The kernel's id of this boot (/proc/sys/kernel/random/boot_id).
public enum BootID {
  public static func current() -> String {
    guard let fd = try? FileDescriptor.open("/proc/sys/kernel/random/boot_id", O_RDONLY) else { return "" }
    defer { fd.close() }
    let bytes = (try? fd.readAll(limit: 64)) ?? []
    return String(decoding: bytes, as: UTF8.self).filter { $0.isHexDigit || $0 == "-" }
  }
}
