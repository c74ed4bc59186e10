import PasslockPOSIX
import Testing

/// Reading logind's state files: the session a control group belongs to.
@Suite struct LogindStateFilesTests {
  /// /proc/PID/cgroup text → the logind session of uid 1000 it is in (what
  /// sd_pid_get_session reads), only where logind puts one.
  @Test(
    arguments: [
      ("0::/user.slice/user-1000.slice/session-3.scope\n", "3"),
      ("0::/user.slice/user-1000.slice/session-c12.scope\n", "c12"),
      // cgroup v1: the name=systemd hierarchy.
      ("12:cpu,cpuacct:/\n1:name=systemd:/user.slice/user-1000.slice/session-7.scope\n0::/\n", "7"),
      // The user manager and services are in no session.
      ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/passlockd.service\n", nil),
      ("0::/system.slice/ssh.service\n", nil),
      // A cgroup the user made in their own delegated subtree, named like a session.
      ("0::/user.slice/user-1000.slice/user@1000.service/session-2.scope\n", nil),
      ("0::/user.slice/user-1000.slice/user@1000.service/x/user.slice/user-1000.slice/session-2.scope\n", nil),
      // Another user's session.
      ("0::/user.slice/user-1001.slice/session-4.scope\n", nil),
      ("0::/user.slice/user-1000.slice/session-../x.scope\n", nil),
      ("", nil),
    ] as [(String, String?)])
  func theSessionOfAControlGroup(_ text: String, _ session: String?) {
    #expect(LogindStateFiles.sessionID(inControlGroups: text, uid: 1000) == session)
  }
}
