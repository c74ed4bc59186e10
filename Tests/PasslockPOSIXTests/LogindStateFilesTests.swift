import PasslockPOSIX
import Testing

@Suite struct LogindStateFilesTests {
  /// /proc/PID/cgroup text → the logind session it is in (what sd_pid_get_session reads).
  @Test(
    arguments: [
      ("0::/user.slice/user-1000.slice/session-3.scope\n", "3"),
      ("0::/user.slice/user-1000.slice/session-c12.scope\n", "c12"),
      // cgroup v1: the name=systemd hierarchy.
      ("12:cpu,cpuacct:/\n1:name=systemd:/user.slice/user-1000.slice/session-7.scope\n0::/\n", "7"),
      // The user manager and services are in no session.
      ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/passlockd.service\n", nil),
      ("0::/system.slice/ssh.service\n", nil),
      ("0::/user.slice/user-1000.slice/session-../x.scope\n", nil),
      ("", nil),
    ] as [(String, String?)])
  func theSessionOfAControlGroup(_ text: String, _ session: String?) {
    #expect(LogindStateFiles.sessionID(inControlGroups: text) == session)
  }
}
