/// What `status` reports about a user's passcode store.
public struct StoreStatus: Equatable, Sendable {
  public enum Kind: String, Sendable {
    /// The root-held store of an installed, setuid `passlock-auth`.
    case system
    /// The user's own state directory (a checkout, the demo, tests).
    case user
  }

  public var passcodeSet: Bool
  public var length: Int
  public var failedAttempts: Int
  public var retryAfterSeconds: Int64
  public var accountPasswordRequired: Bool
  public var store: Kind
  public var directory: String
  /// The account the gatekeeper acts for (its real uid's name).
  public var user: String
  /// Why the external authenticator may not run now; empty when it may.
  public var externalRefusal: String
  /// Set when the account password is required because "password first"
  /// asks for it (then `accountPasswordRequired` is true too).
  public var passwordFirst: PasswordFirst?

  public init(
    passcodeSet: Bool, length: Int, failedAttempts: Int, retryAfterSeconds: Int64,
    accountPasswordRequired: Bool, store: Kind, directory: String, user: String, externalRefusal: String = "",
    passwordFirst: PasswordFirst? = nil
  ) {
    self.passcodeSet = passcodeSet
    self.length = length
    self.failedAttempts = failedAttempts
    self.retryAfterSeconds = retryAfterSeconds
    self.accountPasswordRequired = accountPasswordRequired
    self.store = store
    self.directory = directory
    self.user = user
    self.externalRefusal = externalRefusal
    self.passwordFirst = passwordFirst
  }

  // MARK: Transport in a result frame

  public var fields: [String: String] {
    [
      "passcode_set": passcodeSet ? "1" : "0", "length": String(length),
      "failed_attempts": String(failedAttempts), "retry_after_seconds": String(retryAfterSeconds),
      "account_password_required": accountPasswordRequired ? "1" : "0",
      "store": store.rawValue, "directory": directory, "user": user, "external_refusal": externalRefusal,
      "password_first": passwordFirst?.field ?? "",
    ]
  }

  public init?(fields: [String: String]) {
    guard let set = fields["passcode_set"], let length = fields["length"].flatMap({ Int($0) }),
      let failed = fields["failed_attempts"].flatMap({ Int($0) }),
      let retry = fields["retry_after_seconds"].flatMap({ Int64($0) }),
      let required = fields["account_password_required"],
      let store = fields["store"].flatMap(Kind.init(rawValue:)), let directory = fields["directory"],
      let user = fields["user"]
    else { return nil }
    let externalRefusal = fields["external_refusal"] ?? ""
    self.init(
      passcodeSet: set == "1", length: length, failedAttempts: failed, retryAfterSeconds: retry,
      accountPasswordRequired: required == "1", store: store, directory: directory, user: user,
      externalRefusal: externalRefusal, passwordFirst: fields["password_first"].flatMap(PasswordFirst.init(field:)))
  }

  // MARK: Rendering

  /// One JSON object; `daemon` is passlockd's own JSON view, or null when it is not running.
  public func json(daemon: String? = nil) -> String {
    """
    {"passcode_set":\(passcodeSet),"length":\(length),"failed_attempts":\(failedAttempts),\
    "retry_after_seconds":\(retryAfterSeconds),"account_password_required":\(accountPasswordRequired),\
    "password_first":\(passwordFirst.map { JSON.quoted($0.field) } ?? "null"),\
    "store":"\(store.rawValue)","store_directory":\(JSON.quoted(directory)),"user":\(JSON.quoted(user)),\
    "daemon":\(daemon ?? "null")}
    """
  }

  public func text() -> String {
    var out = "Passcode: " + (passcodeSet ? "set (\(length) digits)" : "not set") + "\n"
    out += "Failed attempts: \(failedAttempts)\n"
    if let passwordFirst {
      out += "Password first: \(passwordFirst.sentence) ('passlock reset' uses it)\n"
    } else if accountPasswordRequired {
      out += "Locked out: the account password is required ('passlock reset')\n"
    } else if retryAfterSeconds > 0 {
      out += "Next try allowed in: \(TimeText.clock(retryAfterSeconds))\n"
    }
    let kind = store == .system ? "system (root-held, setuid passlock-auth)" : "user (not setuid; development mode)"
    out += "Store: \(kind) \(directory)\n"
    return out
  }
}

/// Minimal JSON string quoting; the core does not import Foundation.
public enum JSON {
  public static func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out + "\""
  }
}

/// Durations as people read them.
public enum TimeText {
  /// "4:59", "1:00:00".
  public static func clock(_ seconds: Int64) -> String {
    let h = seconds / 3600
    let m = seconds / 60 % 60
    let s = seconds % 60
    let mm = h > 0 && m < 10 ? "0\(m)" : "\(m)"
    let ss = s < 10 ? "0\(s)" : "\(s)"
    return h > 0 ? "\(h):\(mm):\(ss)" : "\(mm):\(ss)"
  }
}
