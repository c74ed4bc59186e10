import Foundation
import PasslockPOSIX
import Testing

/// The external authenticator beside the passcode, with a test PAM module
/// standing in for pam_fprintd: it says "Place your finger on the reader",
/// writes its pid, and returns what the test writes to its control file.
@Suite(
  .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux (scripts/install-deps installs it)"))
final class ExternalAuthenticatorEndToEndTests {
  let h = Harness()
  var control: String { h.root + "/control" }

  init() throws {
    for directory in ["/pam.d", "/control", "/config/passlock"] {
      try FileManager.default.createDirectory(atPath: h.root + directory, withIntermediateDirectories: true)
    }
    let module = Harness.binDirectory + "/libpam_passlock_test_external.so"
    try "auth required \(module) control=\(control)\naccount required pam_permit.so\n"
      .write(toFile: h.root + "/pam.d/passlock-external", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_PAM_CONFIG_DIR"] = h.root + "/pam.d"
    h.environment["XDG_CONFIG_HOME"] = h.root + "/config"
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
  }

  func configure(autoStart: Bool) throws {
    try "[External]\nEnabled=yes\nAutoStart=\(autoStart ? "yes" : "no")\nArmDelaySec=0\n"
      .write(toFile: h.root + "/config/passlock/passlock.conf", atomically: true, encoding: .utf8)
  }

  func answer(_ word: String) throws {
    try word.write(toFile: control + "/result", atomically: true, encoding: .utf8)
  }

  func waitForStart(_ seconds: Double = 5) -> pid_t? {
    let pid = Wait.value(seconds, every: 10_000) {
      (try? String(contentsOfFile: control + "/started", encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
    }
    if pid != nil { try? FileManager.default.removeItem(atPath: control + "/started") }
    return pid
  }

  @Test func aSuccessWhileDigitsAreHalfTypedUnlocks() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Place your finger on the reader"), "the module's message is on the lock screen")
    #expect(t.screen.contains("│Touch│"))
    t.type("25")
    #expect(t.waitFor("●  ●  ○  ○") || t.screen.contains("●  5  ○  ○"))
    try answer("success")
    #expect(t.waitFor("rc=0"))
  }

  /// During an idle lock's grace the external authenticator does not start
  /// (it would light up, or unlock, for nothing); it starts once the grace
  /// is over, however short ArmDelaySec.
  @Test func notStartedDuringAGrace() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    t.type("passlock lock --grace-ms 2000; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    let started = control + "/started"
    #expect(Wait.holds(for: 1.0) { !FileManager.default.fileExists(atPath: started) }, "not started within the grace")
    #expect(waitForStart() != nil, "started once the grace is over")
    try answer("success")
    #expect(t.waitFor("rc=0"))
  }

  @Test func pamTTYIsTheLockScreensTerminal() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    let pane = t.tmux("display-message -p '#{pane_tty}'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    // The gatekeeper's standard error is somewhere else: not what PAM_TTY names.
    t.type("passlock lock 2>/dev/null; echo rc=$?", enter: true)
    #expect(waitForStart() != nil)
    let tty = (try? String(contentsOfFile: control + "/tty", encoding: .utf8)) ?? ""
    #expect(!pane.isEmpty && tty == pane, "PAM_TTY '\(tty)' is the lock screen's terminal '\(pane)'")
    try answer("success")
    #expect(t.waitFor("rc=0"))
  }

  @Test func theRightPasscodeWinsAndTheHangingStackIsReaped() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    let pid = try #require(waitForStart(), "the external stack started")
    try answer("hang")
    t.type("2580")
    #expect(t.waitFor("rc=0"))
    #expect(Wait.until(2) { !FileManager.default.fileExists(atPath: "/proc/\(pid)") }, "the loser was killed and reaped")
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"))
  }

  @Test func aGatekeeperWhoseLockScreenIsKilledEndsWithIt() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    let gatekeeper = try #require(waitForStart(), "the external stack started")
    try answer("hang")
    let lockScreen = try #require(Self.parent(of: gatekeeper))
    kill(lockScreen, SIGKILL)
    #expect(t.waitFor("rc=137"))
    #expect(Wait.until(2) { !Self.isRunning(gatekeeper) }, "the gatekeeper, and the terminal it holds, went with its lock screen")
    let attempts = h.file("attempts") ?? ""
    #expect(attempts.contains("external_failures=1\n"), "the attempt under way stays counted\n\(attempts)")
  }

  /// /proc/PID/stat: the parent's pid, and whether it runs (a zombie does not).
  static func parent(of pid: pid_t) -> pid_t? { ForegroundJob.statFields(pid).flatMap { $0.count > 1 ? pid_t($0[1]) : nil } }
  static func isRunning(_ pid: pid_t) -> Bool { ForegroundJob.statFields(pid).map { $0.first != "Z" } ?? false }

  @Test func fiveFailuresDisableItUntilThePasscodeSucceeds() throws {
    try configure(autoStart: false)
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("│Touch│"))
    for attempt in 1...5 {
      t.type(" ")  // Space starts it
      #expect(waitForStart() != nil, "attempt \(attempt) started")
      try answer("auth_err")
      #expect(t.waitFor("Not recognized. Try again."))
      t.tmux("send-keys C-u")  // a key press: nothing to clear, keeps the loop honest
    }
    t.type(" ")
    #expect(t.waitFor(5) { !$0.contains("Touch") }.contains("Touch") == false, "the sixth try is refused and the key goes")
    t.type("2580")
    #expect(t.waitFor("rc=0"), "the passcode still works")
    // One passcode success re-enables it.
    t.type("clear; passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("│Touch│"))
    t.type("2580")
    #expect(t.waitFor("rc=0"))
  }

  @Test func unavailableHidesTheKey() throws {
    try configure(autoStart: true)
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(waitForStart() != nil)
    try answer("unavail")
    #expect(t.waitFor(5) { !$0.contains("Touch") && $0.contains("Enter Passcode") }.contains("Touch") == false)
    t.type("2580")
    #expect(t.waitFor("rc=0"))
  }

  @Test func notOfferedWithoutItsPAMService() throws {
    try configure(autoStart: true)
    try FileManager.default.removeItem(atPath: h.root + "/pam.d/passlock-external")
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    // Whether the key is offered is settled before the first frame.
    #expect(t.waitFor("Enter Passcode"))
    #expect(!t.screen.contains("Touch"))
    t.type("2580")
    #expect(t.waitFor("rc=0"))
  }
}

/// After the keypad flow of `passlock set`, the question the SwiftUI original
/// asked about Face ID.
@Suite(
  .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux (scripts/install-deps installs it)"))
struct UseExternalQuestionTests {
  @Test func setAsksAndRemembersTheAnswer() throws {
    let h = Harness()
    for directory in ["/pam.d", "/config/passlock"] {
      try FileManager.default.createDirectory(atPath: h.root + directory, withIntermediateDirectories: true)
    }
    try "auth required pam_permit.so\n".write(toFile: h.root + "/pam.d/passlock-external", atomically: true, encoding: .utf8)
    try "[External]\nEnabled=yes\nKind=face\n".write(toFile: h.root + "/config/passlock/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_PAM_CONFIG_DIR"] = h.root + "/pam.d"
    h.environment["XDG_CONFIG_HOME"] = h.root + "/config"
    let t = Tmux(h)
    t.type("passlock set; echo rc=$?", enter: true)
    #expect(t.waitFor("Set Passcode"))
    t.type("2580")
    t.keys("Enter")
    #expect(t.waitFor("Confirm Passcode"))
    t.type("2580")
    #expect(t.waitFor("Use your face to unlock? [Y/n]"))
    t.type("n", enter: true)
    #expect(t.waitFor("rc=0"))
    #expect(t.screen.contains("Only the passcode will unlock the lock screen."))
    #expect(h.passlock("config").stdout.contains("[External]\nEnabled=no\n"))
  }
}
