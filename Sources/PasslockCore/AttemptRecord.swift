/// The persisted attempt counter: consecutive failures, the wall-clock time
/// before which no new try is allowed, and the hash of the last wrong passcode
/// (so that entering the same wrong passcode twice in a row counts once).
public struct AttemptRecord: Equatable, Sendable {
  public var failures: Int
  /// Unix time (seconds) before which the next try is refused; 0 when none.
  public var retryAfter: Int64
  /// crypt(3) output of the last wrong passcode under the stored salt, or empty.
  public var lastWrongHash: String

  public init(failures: Int = 0, retryAfter: Int64 = 0, lastWrongHash: String = "") {
    self.failures = failures
    self.retryAfter = retryAfter
    self.lastWrongHash = lastWrongHash
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

  static let header = "passlock-attempts 1"

  public func serialized() -> String {
    "\(Self.header)\nfailures=\(failures)\nretry_after=\(retryAfter)\nlast_wrong=\(lastWrongHash)\n"
  }

  /// Parses the file; any deviation is an error (the caller treats it as a lockout).
  public static func parse(_ text: String) throws(RecordFormatError) -> AttemptRecord {
    let fields = try RecordFormat.fields(text, header: header, keys: ["failures", "retry_after", "last_wrong"])
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
    return AttemptRecord(failures: failures, retryAfter: retryAfter, lastWrongHash: lastWrong)
  }
}
