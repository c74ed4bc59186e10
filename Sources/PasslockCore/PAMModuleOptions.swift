/// The arguments of `pam_passlock.so` in a PAM service file.
public struct PAMModuleOptions: Equatable, Sendable {
  public var debug = false
  /// Accept the passcode when PAM_RHOST names a remote host.
  public var allowRemote = false
  /// Where the system store keeps per-user directories (root hosts read it directly).
  public var storeDirectory = "/var/lib/passlock"
  /// The gatekeeper that user-process hosts ask.
  public var helper = "/usr/bin/passlock-auth"

  public init() {}

  /// Options pam_get_authtok reads itself; accepted here so they are not "unknown".
  static let tokenOptions: Set<String> = ["use_first_pass", "try_first_pass", "use_authtok"]

  /// Parses the arguments; the first unknown or malformed one is the error.
  public static func parse(_ arguments: [String]) -> Result<PAMModuleOptions, PAMOptionError> {
    var options = PAMModuleOptions()
    for argument in arguments {
      if tokenOptions.contains(argument) { continue }
      switch argument {
      case "debug": options.debug = true
      case "allow_remote": options.allowRemote = true
      default:
        if let path = value(argument, "store_dir=") {
          options.storeDirectory = path
        } else if let path = value(argument, "helper=") {
          options.helper = path
        } else {
          return .failure(PAMOptionError(argument: argument))
        }
      }
    }
    return .success(options)
  }

  /// The absolute path after `prefix`, or nil.
  static func value(_ argument: String, _ prefix: String) -> String? {
    guard argument.hasPrefix(prefix) else { return nil }
    let path = String(argument.dropFirst(prefix.count))
    return path.hasPrefix("/") ? path : nil
  }
}

public struct PAMOptionError: Error, Equatable, CustomStringConvertible {
  public var argument: String
  public init(argument: String) { self.argument = argument }
  public var description: String {
    "unknown or malformed argument '\(argument)' (known: debug, allow_remote, use_first_pass, try_first_pass, use_authtok, store_dir=/path, helper=/path)"
  }
}
