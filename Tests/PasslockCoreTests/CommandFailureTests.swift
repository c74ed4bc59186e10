import PasslockCore
import Testing

/// Every failure of a command has its sentence and exit status, shared by
/// the CLI and the PAM module, and each gatekeeper answer maps onto one.
@Suite struct CommandFailureTests {
  /// Every failure a command can end with: its words and its exit status.
  @Test(
    arguments: [
      (CommandFailure.noPasscode, "No passcode is set; run 'passlock set' first.", 2),
      (.alreadySet, "A passcode is already set; use 'passlock change' to change it.", 2),
      (.passcodeRefused("a passcode needs at least 4 digits"), "Passcode refused: a passcode needs at least 4 digits.", 2),
      (.nothingEntered, "No passcode was entered.", 2),
      (.accountPasswordRejected("Authentication failure"), "The account password was not accepted (Authentication failure).", 2),
      (.accountPasswordRejected(nil), "The account password was not accepted (PAM refused).", 2),
      (.externalFailed("no reader"), "no reader", 2),
      (.externalFailed(nil), "the external authenticator failed", 2),
      (.terminalGone, "The terminal went away; nothing was changed.", 2),
      (.daemonNotRunning, "passlockd is not running; start it with 'systemctl --user start passlockd'.", 2),
      (.daemonRefused("error: c1: busy"), "passlockd: error: c1: busy", 2),
      (.refused("standard input is not a terminal"), "standard input is not a terminal", 2),
      (
        .lockHeldElsewhere,
        "The compositor refused the lock: another lock screen (swaylock, hyprlock…) holds it; nothing was locked by passlock.", 3
      ),
      (.noSessionLock("the compositor lacks ext-session-lock-v1"), "the compositor lacks ext-session-lock-v1", 69),
      (.gatekeeper("cannot run /usr/bin/passlock-auth"), "cannot run /usr/bin/passlock-auth", 70),
      (.store("refusing /x/passcode: run 'chmod 0600 /x/passcode'"), "refusing /x/passcode: run 'chmod 0600 /x/passcode'", 74),
      (.delayed(retryAfterSeconds: 59), "Too many failed passcode attempts; try again in 0:59.", 75),
      (
        .accountPasswordRequired(reason: nil),
        "Too many failed passcode attempts; the account password is required: run 'passlock reset'.", 77
      ),
      (
        .accountPasswordRequired(reason: "48 hours"),
        "Too many failed passcode attempts (48 hours); the account password is required: run 'passlock reset'.", 77
      ),
      (.config("/etc/passlock/passlock.conf:3: bad"), "/etc/passlock/passlock.conf:3: bad", 78),
      (.interrupted, "Interrupted.", 130),
    ] as [(CommandFailure, String, Int32)])
  func everyFailureHasItsWordsAndStatus(_ failure: CommandFailure, _ message: String, _ status: Int32) {
    #expect(failure.message == message)
    #expect(failure.exitStatus == status)
    #expect(status != 1, "1 is a wrong passcode's alone")
  }

  /// A gatekeeper answer that is not the one asked for → the failure it means.
  @Test(
    arguments: [
      (AuthProtocol.ResultCode.noPasscode, nil, CommandFailure.noPasscode),
      (.alreadySet, nil, .alreadySet),
      (.rejected, "too simple", .passcodeRefused("too simple")),
      (.accountPasswordFailed, "Authentication failure", .accountPasswordRejected("Authentication failure")),
      (.externalUnavailable, "no reader", .externalFailed("no reader")),
      (.storeError, "world-readable", .store("world-readable")),
      (.protocolError, "bad frame", .gatekeeper("bad frame")),
      (.protocolError, nil, .gatekeeper("passlock-auth failed (protocolError)")),
    ] as [(AuthProtocol.ResultCode, String?, CommandFailure)])
  func gatekeeperAnswersMapOntoFailures(_ code: AuthProtocol.ResultCode, _ message: String?, _ failure: CommandFailure) {
    #expect(CommandFailure(code, message: message) == failure)
  }

  @Test func thePAMModuleAndTheCLIShareTheTooManyFailuresSentence() {
    #expect(CommandFailure.tooManyFailures(retryAfterSeconds: 300) == "Too many failed passcode attempts; try again in 5:00.")
    #expect(CommandFailure.delayed(retryAfterSeconds: 300).message == CommandFailure.tooManyFailures(retryAfterSeconds: 300))
  }
}
