import PasslockCore
import Testing

/// pam_passlock.so's rule: the passcode is offered only to the person it
/// belongs to (the host's real uid is 0 or PAM_USER's), and only locally.
@Suite struct PasscodeOfferTests {
  static let alice: UInt32 = 1000
  static let bob: UInt32 = 1001

  /// (host's real uid, PAM_USER's uid, PAM_RHOST, the host's logind session is remote, allow_remote) → offer.
  @Test(
    arguments: [
      // login, sshd, display managers: root hosts run by root.
      (0, alice, nil, false, false, PasscodeOffer.offer),
      // alice's own sudo, su to herself, polkit authenticating her as herself.
      (alice, alice, nil, false, false, .offer),
      // su alice started by bob; pkexec asking bob for alice's (an admin's) password.
      (bob, alice, nil, false, false, .notTheOwner(realUID: bob, targetUID: alice)),
      // sudo -u root with rootpw, su root: the admin's passcode never replaces root's password.
      (alice, 0, nil, false, false, .notTheOwner(realUID: alice, targetUID: 0)),
      // allow_remote does not lift the owner rule.
      (bob, alice, nil, false, true, .notTheOwner(realUID: bob, targetUID: alice)),
      (0, alice, "203.0.113.9", false, false, .remote("203.0.113.9")),
      (0, alice, "203.0.113.9", false, true, .offer),
      (0, alice, "localhost", false, false, .offer),
      (0, alice, "::1", false, false, .offer),
      (0, alice, ":0", false, false, .offer),
      (0, alice, "", false, false, .offer),
      // sudo typed in an ssh session: no PAM_RHOST, but logind says remote.
      (alice, alice, nil, true, false, .remote("a remote logind session")),
      (alice, alice, nil, true, true, .offer),
      (alice, nil, nil, false, false, .unknownUser),
    ] as [(UInt32, UInt32?, String?, Bool, Bool, PasscodeOffer)])
  func theRule(_ real: UInt32, _ target: UInt32?, _ host: String?, _ remoteSession: Bool, _ allowRemote: Bool, _ offer: PasscodeOffer) {
    #expect(
      PasscodeOffer.decide(
        realUID: real, targetUID: target, remoteHost: host, sessionIsRemote: remoteSession, allowRemote: allowRemote) == offer)
  }

  @Test func theReasonSaysWhoAsked() {
    #expect(
      PasscodeOffer.notTheOwner(realUID: 1001, targetUID: 1000).reason
        == "the process asking (real uid 1001) is not uid 1000, whose passcode it is")
  }
}
