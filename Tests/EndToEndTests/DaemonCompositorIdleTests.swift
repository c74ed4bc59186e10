import Foundation
import PasslockPOSIX
import Testing

/// Idle from the compositor, against a compositor the test plays
/// (Tests/Faults/idle_compositor.py) in the daemon's runtime directory and,
/// as logind says, in the session: the idle lock comes when the compositor
/// says `idled`, with nothing from IdleHint; a compositor without
/// ext-idle-notify-v1, or one that never answers, leaves the session to
/// IdleHint as before (never without an idle lock). The real compositor is
/// sway in Tests/System/run. `[Wayland] Lock=vt`: the lock itself goes on
/// the pty, as a compositor the test plays cannot be locked.
extension DaemonEndToEndTests {
  static let idleCompositorScript = WaylandEndToEndTests.root.appendingPathComponent("Tests/Faults/idle_compositor.py").path

  /// The test's compositor for `scenario` as wayland-9, in the session; its
  /// pid and log.
  func idleCompositor(_ scenario: String, idleAfter seconds: Int = 1) throws -> (pid: pid_t, log: String) {
    let socket = h.root + "/run/wayland-9"
    let log = h.root + "/compositor.log"
    let pid = try #require(
      Spawn.start(["/usr/bin/python3", Self.idleCompositorScript, socket, log, scenario, String(seconds)], environment: [:]))
    logind.python(
      "m.AddMethod(MANAGER, 'GetSessionByPID', 'u', 'o', 'ret = dbus.ObjectPath(\"/org/freedesktop/login1/session/\(logind.session)\" "
        + "if args[0] == \(pid) else \"/org/freedesktop/login1/session/other\")', dbus_interface=MOCK)")
    waitFor("the compositor's socket") { access(socket, F_OK) == 0 }
    return (pid, log)
  }

  func stop(_ compositor: (pid: pid_t, log: String)) {
    kill(compositor.pid, SIGKILL)
    _ = Spawn.wait(compositor.pid, seconds: 2)
  }

  func compositorLog(_ compositor: (pid: pid_t, log: String)) -> String {
    (try? String(contentsOfFile: compositor.log, encoding: .utf8)) ?? ""
  }

  @Test func theCompositorsIdledLocksTheSession() throws {
    try aGraphicalSession(configured: "[Idle]\nLockAfterSec=7\n[Wayland]\nLock=vt\n")
    let compositor = try idleCompositor("idle", idleAfter: 3)
    defer { stop(compositor) }
    try logind.startDaemon()
    waitFor("the compositor asked for LockAfterSec") { compositorLog(compositor).contains("get_idle_notification 7000") }
    // The daemon counts the compositor as timing the session once its answer
    // is read, which may come after the request is logged: polled, within
    // the three seconds before `idled`.
    waitFor("the status names the compositor") {
      h.passlock("status").stdout.contains("Session c1: \(logind.tty), unlocked, idle timed by its compositor (wayland-9)")
    }
    // IdleHint never says idle here: only the compositor does, three seconds later.
    waitFor("locked when the compositor said idled", seconds: 6) { logind.lockerPIDs.count == 1 }
    // The daemon says so once the spawn returns, which may be after the
    // lock screen shows among its children.
    waitFor("the daemon said why") { logind.daemonLog.contains("session c1: locked (idle)") }
    waitFor("its watch closed while locked") { compositorLog(compositor).contains("disconnected") }
    // Keys typed before the lock screen reads the terminal are flushed, as they should be.
    waitForScreen("Enter Passcode", "the lock screen drawn")
    unlock()
    waitFor("asked again after the unlock") { compositorLog(compositor).components(separatedBy: "get_idle_notification").count == 3 }
  }

  @Test(arguments: [
    ("without", "it offers no ext-idle-notify-v1"), ("silent", "no answer within 5 s"),
  ])
  func aCompositorThatCannotTimeIdleLeavesItToIdleHint(scenario: String, why: String) throws {
    try aGraphicalSession(configured: "[Idle]\nLockAfterSec=1\n[Wayland]\nLock=vt\n")
    let compositor = try idleCompositor(scenario)
    defer { stop(compositor) }
    try logind.startDaemon()
    waitFor("the fallback said", seconds: 8) {
      logind.daemonLog.contains("session c1: idle is not timed by the compositor (wayland-9): \(why); the session's IdleHint times it")
    }
    #expect(logind.lockerPIDs.isEmpty)
    setIdleHint(true, secondsAgo: 1)
    waitFor("locked by IdleHint", seconds: 4) { logind.lockerPIDs.count == 1 }
  }
}
