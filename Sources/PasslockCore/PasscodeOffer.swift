/// Whether `pam_passlock.so` may offer a user's passcode in a PAM transaction:
/// only to the person it belongs to, at this machine.
///
/// The rule, for a transaction authenticating PAM_USER (uid `target`):
/// - the host's *real* uid must be 0 or `target`. `login`, sshd and display
///   managers run as root; the user's own `sudo`, `su` to themselves and
///   polkit's agent helper authenticating them as themselves have the user's
///   real uid. `su alice` started by bob, `pkexec` asking bob for an admin's
///   password, sudo with `targetpw`/`rootpw` have another real uid: the
///   passcode never applies there, so nobody can guess it, count against it
///   or learn whether it exists through someone else's setuid program.
/// - it is not remote: PAM_RHOST names another host (sshd, a remote display
///   manager), or the process runs inside a logind session that logind
///   marks `Remote=yes` (sudo or su typed in an ssh session: they never set
///   PAM_RHOST). `allow_remote` lifts this part only.
public enum PasscodeOffer: Equatable, Sendable {
  case offer
  /// PAM_USER has no account (nothing to look the store up by).
  case unknownUser
  /// The process asking belongs to someone else (its real uid).
  case notTheOwner(realUID: UInt32, targetUID: UInt32)
  /// From another machine: the host named, or "a remote logind session".
  case remote(String)

  /// `sessionIsRemote`: the host's own logind session is `Remote=yes`
  /// (false outside a session, or where logind does not run).
  public static func decide(
    realUID: UInt32, targetUID: UInt32?, remoteHost: String?, sessionIsRemote: Bool, allowRemote: Bool
  ) -> PasscodeOffer {
    guard let targetUID else { return .unknownUser }
    guard realUID == 0 || realUID == targetUID else { return .notTheOwner(realUID: realUID, targetUID: targetUID) }
    guard !allowRemote else { return .offer }
    if let host = remoteHost, !host.isEmpty, !isLocal(host) { return .remote(host) }
    if sessionIsRemote { return .remote("a remote logind session") }
    return .offer
  }

  /// PAM_RHOST values that mean this machine (X display names start with ':').
  public static func isLocal(_ host: String) -> Bool {
    host == "localhost" || host == "127.0.0.1" || host == "::1" || host.hasPrefix(":")
  }

  /// Why the passcode was not offered, for the module's debug log.
  public var reason: String {
    switch self {
    case .offer: return "the passcode applies"
    case .unknownUser: return "the user has no account"
    case .notTheOwner(let real, let target):
      return "the process asking (real uid \(real)) is not uid \(target), whose passcode it is"
    case .remote(let host): return "remote (\(host)): the passcode is for this machine only"
    }
  }
}
