import PasslockCore
import Testing

/// pam_passlock.so's rule: the passcode is offered only to the person it
/// belongs to (the host's real uid is 0 or PAM_USER's), and only locally.
@Suite struct PasscodeOfferTests {
  static let alice: UInt32 = 1000
  static let bob: UInt32 = 1001

  /// (host's real uid, PAM_USER's uid, PAM_RHOST, PAM_TTY, where logind says
  /// a host with the user's uid runs, allow_remote) → offer.
  @Test(
    arguments: [
      // login on a VT, a serial line, a pty; a display manager on :0.
      (0, alice, nil, "/dev/tty1", .noSession, false, PasscodeOffer.offer),
      (0, alice, nil, "tty1", .noSession, false, .offer),
      (0, alice, nil, "/dev/ttyS0", .noSession, false, .offer),
      (0, alice, nil, "/dev/pts/3", .noSession, false, .offer),
      (0, alice, nil, ":0", .noSession, false, .offer),
      // sshd, loopback included: never (its PAM_TTY is "ssh", PAM_RHOST a host).
      (0, alice, "127.0.0.1", "ssh", .noSession, false, .remote("PAM_RHOST 127.0.0.1")),
      (0, alice, "localhost", "ssh", .noSession, false, .remote("PAM_RHOST localhost")),
      (0, alice, "::1", "ssh", .noSession, false, .remote("PAM_RHOST ::1")),
      (0, alice, nil, "ssh", .noSession, false, .remote("PAM_TTY ssh is no terminal of this machine")),
      // A root daemon with no terminal (polkit ≥ 127 runs its helper as a root service).
      (0, alice, nil, nil, .noSession, false, .remote("PAM_TTY unset is no terminal of this machine")),
      (0, alice, nil, "tty", .noSession, false, .remote("PAM_TTY tty is no terminal of this machine")),
      (0, alice, "203.0.113.9", "ssh", .noSession, true, .offer),
      // alice's own sudo, su to herself, polkit authenticating her as herself.
      (alice, alice, nil, "/dev/pts/1", .session(remote: false, remoteOpen: false), false, .offer),
      (alice, alice, nil, nil, .noLogind, false, .offer),
      // In an ssh login (no PAM_RHOST from sudo, but logind says remote), or nowhere logind knows.
      (alice, alice, nil, "/dev/pts/1", .session(remote: true, remoteOpen: true), false, .remote("a remote logind session")),
      (alice, alice, nil, "/dev/pts/1", .noSession, false, .remote("no logind session of the user's says where they are")),
      (alice, alice, nil, "/dev/pts/1", .session(remote: true, remoteOpen: true), true, .offer),
      (alice, alice, ":0", nil, .session(remote: false, remoteOpen: false), false, .offer),
      // In a console login's session while an ssh login is open: a tmux
      // started here may be attached from there.
      (
        alice, alice, nil, "/dev/pts/2", .session(remote: false, remoteOpen: true), false,
        .remote("a remote session of the user's is open (ssh, and a tmux attached from it)")
      ),
      // Outside every session (a desktop's terminal, in the user manager):
      // only with a local display session and no remote one open, since a
      // tmux server started on the desktop may be attached over ssh.
      (alice, alice, nil, "/dev/pts/4", .outsideSessions(localDisplay: true, remoteOpen: false), false, .offer),
      (
        alice, alice, nil, "/dev/pts/4", .outsideSessions(localDisplay: true, remoteOpen: true), false,
        .remote("a remote session of the user's is open (ssh, and a tmux attached from it)")
      ),
      (
        alice, alice, nil, "/dev/pts/4", .outsideSessions(localDisplay: false, remoteOpen: false), false,
        .remote("no logind session of the user's says where they are")
      ),
      (alice, alice, nil, "/dev/pts/4", .outsideSessions(localDisplay: true, remoteOpen: true), true, .offer),
      // su alice started by bob; pkexec asking bob for alice's (an admin's) password.
      (bob, alice, nil, "/dev/pts/1", .session(remote: false, remoteOpen: false), false, .notTheOwner(realUID: bob, targetUID: alice)),
      // sudo -u root with rootpw, su root: the admin's passcode never replaces root's password.
      (alice, 0, nil, "/dev/pts/1", .session(remote: false, remoteOpen: false), false, .notTheOwner(realUID: alice, targetUID: 0)),
      // allow_remote does not lift the owner rule.
      (bob, alice, nil, nil, .noLogind, true, .notTheOwner(realUID: bob, targetUID: alice)),
      (alice, nil, nil, nil, .noLogind, false, .unknownUser),
    ] as [(UInt32, UInt32?, String?, String?, PasscodeOffer.Origin, Bool, PasscodeOffer)])
  func theRule(
    _ real: UInt32, _ target: UInt32?, _ host: String?, _ terminal: String?, _ origin: PasscodeOffer.Origin, _ allowRemote: Bool,
    _ offer: PasscodeOffer
  ) {
    #expect(
      PasscodeOffer.decide(
        realUID: real, targetUID: target, remoteHost: host, terminal: terminal, origin: origin, allowRemote: allowRemote) == offer)
  }

  @Test func theReasonSaysWhoAsked() {
    #expect(
      PasscodeOffer.notTheOwner(realUID: 1001, targetUID: 1000).reason
        == "the process asking (real uid 1001) is not uid 1000, whose passcode it is")
  }
}
