/// "Password first, passcode after": why the passcode is not accepted now
/// although nothing is wrong with it. Under the root-held policy
/// ([Authentication] PasswordAfterBoot, PasswordEveryHours) the account
/// password must have been used once after each boot, and again once it was
/// last used longer ago than the hours given; until then the passcode is
/// accepted nowhere (lock screens, `passlock`, pam_passlock) and the external
/// authenticator does not start. Nothing is counted while it stands.
public enum PasswordFirst: Equatable, Sendable {
  /// The account password was not used since this boot.
  case afterRestart
  /// It was last used more than this many hours ago.
  case afterHours(Int)

  /// The value of the status and result frames' `password_first` field.
  public var field: String {
    switch self {
    case .afterRestart: return "restart"
    case .afterHours(let hours): return "hours:\(hours)"
    }
  }

  public init?(field: String) {
    if field == "restart" {
      self = .afterRestart
    } else if field.hasPrefix("hours:"), let hours = Int(field.dropFirst(6)), hours > 0 {
      self = .afterHours(hours)
    } else {
      return nil
    }
  }

  /// The sentence for the CLI, the PAM module and the journal (the lock
  /// screens say it through `Texts`, in their language).
  public var sentence: String {
    switch self {
    case .afterRestart: return "Enter your password once after a restart; the passcode works after that."
    case .afterHours(let hours):
      return "Enter your password: the passcode needs it once every \(hours) hours."
    }
  }
}

/// The policy as the root-held configuration sets it.
public struct PasswordFirstPolicy: Equatable, Sendable {
  public var afterBoot: Bool
  /// 0: no limit in hours.
  public var everyHours: Int

  public static let off = PasswordFirstPolicy(afterBoot: false, everyHours: 0)

  public init(afterBoot: Bool, everyHours: Int) {
    self.afterBoot = afterBoot
    self.everyHours = everyHours
  }

  public init(_ config: Config) {
    self.init(afterBoot: config.bool("Authentication.PasswordAfterBoot"), everyHours: config.int("Authentication.PasswordEveryHours"))
  }

  public var isOff: Bool { !afterBoot && everyHours == 0 }

  /// What it asks for, given when (Unix seconds, 0 for never) and in which
  /// boot the account password was last used. A use up to the window's
  /// length in the future (a clock set back a little) counts as now; one
  /// further ahead (recorded under a clock far ahead, since corrected) asks
  /// again, or it would turn the rule off until the clock caught up.
  public func requirement(lastPassword: Int64, lastPasswordBoot: String, now: Int64, boot: String) -> PasswordFirst? {
    if afterBoot && (lastPassword == 0 || lastPasswordBoot.isEmpty || lastPasswordBoot != boot) { return .afterRestart }
    let window = Int64(everyHours) * 3600
    if everyHours > 0 && (lastPassword == 0 || now - lastPassword > window || lastPassword - now > window) {
      return .afterHours(everyHours)
    }
    return nil
  }
}
