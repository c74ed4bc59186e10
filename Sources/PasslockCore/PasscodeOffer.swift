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
/// - it is at this machine. PAM_RHOST, when set, must be an X display
///   (":0"): any host name, loopback's too, is a network login (`ssh
///   alice@127.0.0.1` is another user's way in). A host run as root (not on
///   the user's behalf) must name a terminal of this machine in PAM_TTY: a
///   VT, a serial line, a pty, an X display; sshd says "ssh", a daemon
///   nothing. A host with the user's real uid is judged by logind: in a
///   session that is `Remote=yes` (sudo typed in an ssh login) it is not at
///   this machine. Nor is it while the user has any remote session open: a
///   tmux server started at the desk (in a console login's session, or in
///   the user manager outside every session, as a desktop's terminals are)
///   may be attached from the ssh login, and `systemd-run --user --pty
///   sudo -i` typed there runs in the user manager too; nothing says where
///   the keys come from. Outside every session the user must also have a
///   local display session. Where logind runs, no session at all is not at
///   this machine either. `allow_remote` lifts this part only.
public enum PasscodeOffer: Equatable, Sendable {
  case offer
  /// PAM_USER has no account (nothing to look the store up by).
  case unknownUser
  /// The process asking belongs to someone else (its real uid).
  case notTheOwner(realUID: UInt32, targetUID: UInt32)
  /// Not at this machine, and why.
  case remote(String)

  /// Where a host with the user's real uid runs, as logind tells it.
  public enum Origin: Equatable, Sendable {
    /// logind does not run: PAM_RHOST is all there is.
    case noLogind
    /// The user's logind session it runs in, and whether any of the user's
    /// sessions is remote.
    case session(remote: Bool, remoteOpen: Bool)
    /// In none of the user's sessions (the user manager's services, a
    /// desktop's terminal): whether they have a local display session, and
    /// whether any of their sessions is remote.
    case outsideSessions(localDisplay: Bool, remoteOpen: Bool)
    /// logind runs, but no session of the user's says where they are.
    case noSession
  }

  public static func decide(
    realUID: UInt32, targetUID: UInt32?, remoteHost: String?, terminal: String?, origin: Origin, allowRemote: Bool
  ) -> PasscodeOffer {
    guard let targetUID else { return .unknownUser }
    guard realUID == 0 || realUID == targetUID else { return .notTheOwner(realUID: realUID, targetUID: targetUID) }
    guard !allowRemote else { return .offer }
    if let host = remoteHost, !host.isEmpty, !isDisplay(host) { return .remote("PAM_RHOST \(host)") }
    if realUID == 0 {
      guard let terminal, isLocalTerminal(terminal) else { return .remote("PAM_TTY \(terminal ?? "unset") is no terminal of this machine") }
      return .offer
    }
    switch origin {
    case .noLogind, .session(remote: false, remoteOpen: false), .outsideSessions(localDisplay: true, remoteOpen: false): return .offer
    case .session(remote: true, _): return .remote("a remote logind session")
    case .session(remote: false, remoteOpen: true), .outsideSessions(_, remoteOpen: true):
      return .remote("a remote session of the user's is open (ssh, and a tmux attached from it)")
    case .outsideSessions(localDisplay: false, remoteOpen: false), .noSession:
      return .remote("no logind session of the user's says where they are")
    }
  }

  /// PAM_TTY values that name a terminal of this machine: a VT, a serial
  /// line, a pty, the console, an X display (":0").
  public static func isLocalTerminal(_ terminal: String) -> Bool {
    let name = terminal.hasPrefix("/dev/") ? String(terminal.dropFirst(5)) : terminal
    return isDisplay(name) || name == "console" || (name.hasPrefix("tty") && name.count > 3) || name.hasPrefix("pts/")
  }

  /// A local X display name, ":0" or ":1.0" (not "::1", an IPv6 host).
  public static func isDisplay(_ name: String) -> Bool {
    guard name.hasPrefix(":") else { return false }
    let parts = name.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
    return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
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
