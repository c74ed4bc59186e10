/// The answer to a passcode check (`verify`, and the current-passcode step of
/// `change` and `remove`), decoded once from the gatekeeper's `result` frame
/// and encoded into one by the gatekeeper. The lock screen, the CLI and the
/// PAM module read this, never the frame's fields.
public enum VerifyOutcome: Equatable, Sendable {
  case accepted
  /// Wrong: the failures counted so far, the wait before the next try (0 for
  /// none), and whether the account password is required from now on.
  case wrong(failures: Int, retryAfterSeconds: Int64, accountPasswordRequired: Bool)
  /// Not checked: a delay from earlier failures is still running.
  case delayed(retryAfterSeconds: Int64)
  /// Not checked: only the account password opens it now (and why, when the
  /// reason is not the failures: 48 hours without the passcode, a reboot).
  case accountPasswordRequired(reason: String?)
  /// Not checked or counted: the account password must be used once first
  /// (the root-held "password first" policy).
  case passwordFirst(PasswordFirst)
  /// Any other answer (no passcode, a refused store, a protocol error…).
  case failed(AuthProtocol.ResultCode, message: String?)

  public init(_ result: AuthResult) {
    let retry = result.fields["retry_after_seconds"].flatMap { Int64($0) } ?? 0
    switch result.code {
    case .ok:
      self = .accepted
    case .mismatch:
      // 0 happens: the same wrong passcode twice counts once, and a success
      // elsewhere may have cleared the count meanwhile.
      guard let failures = result.fields["failed_attempts"].flatMap({ Int($0) }), failures >= 0 else {
        self = .failed(.protocolError, message: "passlock-auth answered 'wrong' without the count of failures")
        return
      }
      self = .wrong(
        failures: failures, retryAfterSeconds: retry, accountPasswordRequired: result.fields["account_password_required"] == "1")
    case .delayed:
      self = .delayed(retryAfterSeconds: retry)
    case .accountPasswordRequired:
      if let why = result.fields["password_first"].flatMap(PasswordFirst.init(field:)) {
        self = .passwordFirst(why)
      } else {
        self = .accountPasswordRequired(reason: result.message)
      }
    default:
      self = .failed(result.code, message: result.message)
    }
  }

  /// The `result` frame's payload that carries this answer.
  public var result: AuthResult {
    switch self {
    case .accepted:
      return AuthResult(.ok)
    case .wrong(let failures, let retry, let required):
      var fields = ["failed_attempts": String(failures)]
      if retry > 0 { fields["retry_after_seconds"] = String(retry) }
      if required { fields["account_password_required"] = "1" }
      return AuthResult(.mismatch, fields)
    case .delayed(let retry):
      return AuthResult(.delayed, ["retry_after_seconds": String(retry)])
    case .accountPasswordRequired(let reason):
      return AuthResult(.accountPasswordRequired, reason.map { ["message": $0] } ?? [:])
    case .passwordFirst(let why):
      return AuthResult(.accountPasswordRequired, ["password_first": why.field, "message": why.sentence])
    case .failed(let code, let message):
      return AuthResult(code, message.map { ["message": $0] } ?? [:])
    }
  }
}

extension StoreStatus {
  /// The status a `status` request answered; nil for any other answer (its
  /// `message` says why) or fields that do not make a status.
  public init?(_ result: AuthResult) {
    guard result.code == .ok else { return nil }
    self.init(fields: result.fields)
  }

  /// The status, or the failure that says why there is none (the lock
  /// screen, the CLI and the console holder report it alike).
  public static func answered(by result: AuthResult) throws(CommandFailure) -> StoreStatus {
    guard let status = StoreStatus(result) else {
      throw result.code == .ok ? .gatekeeper("passlock-auth gave no status") : CommandFailure(result.code, message: result.message)
    }
    return status
  }
}
