/// The persisted attempt counter: consecutive failures, the wall-clock time
/// before which no new try is allowed, and the hash of the last wrong passcode
/// (so that entering the same wrong passcode twice in a row counts once).
/// It also carries what the external authenticator's rules need: when (and in
/// which boot) the passcode last succeeded, and the external failures since;
/// and what "password first" needs: when (and in which boot) the account
/// password was last used.
public struct AttemptRecord: Equatable, Sendable {
  public var failures: Int
  /// Unix time (seconds) before which the next try is refused; 0 when none.
  public var retryAfter: Int64
  /// crypt(3) output of the last wrong passcode under the stored salt, or empty.
  public var lastWrongHash: String
  /// Unix time of the last passcode success; 0 when never.
  public var lastSuccess: Int64
  /// The kernel's boot id at that success (the external path needs one per boot).
  public var lastSuccessBoot: String
  /// Counted external authenticator failures since the last passcode success.
  public var externalFailures: Int
  /// Unix time of the last use of the account password; 0 when never.
  public var lastPassword: Int64
  /// The kernel's boot id then.
  public var lastPasswordBoot: String

  public init(
    failures: Int = 0, retryAfter: Int64 = 0, lastWrongHash: String = "", lastSuccess: Int64 = 0,
    lastSuccessBoot: String = "", externalFailures: Int = 0, lastPassword: Int64 = 0, lastPasswordBoot: String = ""
  ) {
    self.failures = failures
    self.retryAfter = retryAfter
    self.lastWrongHash = lastWrongHash
    self.lastSuccess = lastSuccess
    self.lastSuccessBoot = lastSuccessBoot
    self.externalFailures = externalFailures
    self.lastPassword = lastPassword
    self.lastPasswordBoot = lastPasswordBoot
  }

  /// After a passcode success: no failures, and the external path re-armed.
  /// The account password's last use stays (password first).
  public func succeeded(now: Int64, boot: String) -> AttemptRecord {
    AttemptRecord(lastSuccess: now, lastSuccessBoot: boot, lastPassword: lastPassword, lastPasswordBoot: lastPasswordBoot)
  }

  /// After the account password: the counter starts again, and its use is
  /// recorded (password first).
  public func afterAccountPassword(now: Int64, boot: String) -> AttemptRecord {
    clearingFailures().usingPassword(now: now, boot: boot)
  }

  /// The account password's use recorded, nothing else changed.
  public func usingPassword(now: Int64, boot: String) -> AttemptRecord {
    var record = self
    record.lastPassword = now
    record.lastPasswordBoot = boot
    return record
  }

  /// What `policy` asks for before the passcode may be tried.
  public func passwordFirst(_ policy: PasswordFirstPolicy, now: Int64, boot: String) -> PasswordFirst? {
    policy.requirement(lastPassword: lastPassword, lastPasswordBoot: lastPasswordBoot, now: now, boot: boot)
  }

  /// After an external authenticator success: no failures of either kind;
  /// the last passcode success (the 48-hour rule) stays.
  public func afterExternalSuccess() -> AttemptRecord {
    var record = clearingFailures()
    record.externalFailures = 0
    return record
  }

  /// After the account password: the counter starts again; the external
  /// path's state is the passcode's business and stays.
  public func clearingFailures() -> AttemptRecord {
    var record = self
    record.failures = 0
    record.retryAfter = 0
    record.lastWrongHash = ""
    return record
  }

  // MARK: The external authenticator's rules (as iOS applies them to Face ID)

  public static let externalFailureLimit = 5
  public static let externalWindowSeconds: Int64 = 48 * 3600

  /// Why the external authenticator is not offered, or nil when it is.
  public func externalRefusal(now: Int64, boot: String) -> String? {
    if lastSuccess == 0 || lastSuccessBoot != boot { return "the passcode is needed once after boot" }
    if now - lastSuccess > Self.externalWindowSeconds { return "the passcode is needed every 48 hours" }
    if externalFailures >= Self.externalFailureLimit { return "too many failures; enter the passcode" }
    if failures >= AttemptPolicy.lockoutFailures { return "the account password is required" }
    return nil
  }

  public static let cleared = AttemptRecord()

  /// Whether a try is allowed at `now`.
  public enum Gate: Equatable, Sendable {
    case open
    case wait(seconds: Int64)
    case accountPasswordRequired
  }

  public func gate(now: Int64) -> Gate {
    if failures >= AttemptPolicy.lockoutFailures { return .accountPasswordRequired }
    guard retryAfter > now else { return .open }
    // A deadline further away than the policy's delay means the clock went back;
    // cap it rather than make the user wait for the clock to catch up.
    let remaining = min(retryAfter - now, AttemptPolicy.delaySeconds(afterFailures: failures))
    return remaining > 0 ? .wait(seconds: remaining) : .open
  }

  /// The record to persist *before* checking a passcode: the try already counted
  /// as a failure with its delay, so a crash or kill during the check costs the
  /// attacker the attempt.
  public func countingAttempt(now: Int64) -> AttemptRecord {
    let next = failures + 1
    var record = self
    record.failures = next
    record.retryAfter = now + AttemptPolicy.delaySeconds(afterFailures: next)
    return record
  }

  // MARK: File format

  static let header = "passlock-attempts 3"
  static let keys = [
    "failures", "retry_after", "last_wrong", "last_success", "last_success_boot", "external_failures", "last_password",
    "last_password_boot",
  ]

  public func serialized() -> String {
    "\(Self.header)\nfailures=\(failures)\nretry_after=\(retryAfter)\nlast_wrong=\(lastWrongHash)\n"
      + "last_success=\(lastSuccess)\nlast_success_boot=\(lastSuccessBoot)\nexternal_failures=\(externalFailures)\n"
      + "last_password=\(lastPassword)\nlast_password_boot=\(lastPasswordBoot)\n"
  }

  /// Parses the file; any deviation is an error (the caller treats it as a lockout).
  /// Version 1 files (before the external authenticator) have the first three
  /// keys, version 2 files (before password first) the first six.
  static let version1Header = "passlock-attempts 1"
  static let version2Header = "passlock-attempts 2"

  public static func parse(_ text: String) throws(RecordFormatError) -> AttemptRecord {
    var fields: [String: String]
    if text.hasPrefix(version1Header + "\n") {
      fields = try RecordFormat.fields(text, header: version1Header, keys: Array(keys.prefix(3)))
      fields["last_success"] = "0"
      fields["last_success_boot"] = ""
      fields["external_failures"] = "0"
    } else if text.hasPrefix(version2Header + "\n") {
      fields = try RecordFormat.fields(text, header: version2Header, keys: Array(keys.prefix(6)))
    } else {
      fields = try RecordFormat.fields(text, header: header, keys: keys)
    }
    fields["last_password"] = fields["last_password"] ?? "0"
    fields["last_password_boot"] = fields["last_password_boot"] ?? ""
    guard let failures = Int(fields["failures"]!), failures >= 0 else {
      throw RecordFormatError(reason: "failures is not a count")
    }
    guard let retryAfter = Int64(fields["retry_after"]!), retryAfter >= 0 else {
      throw RecordFormatError(reason: "retry_after is not a time")
    }
    let lastWrong = fields["last_wrong"]!
    guard lastWrong.isEmpty || lastWrong.hasPrefix("$") else {
      throw RecordFormatError(reason: "last_wrong is not a hash")
    }
    guard let lastSuccess = Int64(fields["last_success"]!), lastSuccess >= 0 else {
      throw RecordFormatError(reason: "last_success is not a time")
    }
    let boot = fields["last_success_boot"]!
    guard boot.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { throw RecordFormatError(reason: "last_success_boot is not a boot id") }
    guard let external = Int(fields["external_failures"]!), external >= 0 else {
      throw RecordFormatError(reason: "external_failures is not a count")
    }
    guard let lastPassword = Int64(fields["last_password"]!), lastPassword >= 0 else {
      throw RecordFormatError(reason: "last_password is not a time")
    }
    let passwordBoot = fields["last_password_boot"]!
    guard passwordBoot.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
      throw RecordFormatError(reason: "last_password_boot is not a boot id")
    }
    return AttemptRecord(
      failures: failures, retryAfter: retryAfter, lastWrongHash: lastWrong, lastSuccess: lastSuccess,
      lastSuccessBoot: boot, externalFailures: external, lastPassword: lastPassword, lastPasswordBoot: passwordBoot)
  }
}
