import Foundation
import PasslockPOSIX
import Testing

/// org.freedesktop.ScreenSaver on the session bus (here the test's private
/// bus stands for it): an application's Inhibit holds the idle lock off
/// until its UnInhibit or until its connection ends; one application cannot
/// end another's; passlockd takes the name only while it idle-locks, never
/// from another owner, never beside GNOME. The client is a real D-Bus
/// program (Tests/Fixtures/screensaver_client.py, python3-dbus).
extension DaemonEndToEndTests {
  static let screenSaverClient = WaylandEndToEndTests.root.appendingPathComponent("Tests/Fixtures/screensaver_client.py").path

  /// The client with `arguments`, its output in a file; its pid and that file.
  func screenSaverClient(_ arguments: [String], output name: String) throws -> (pid: pid_t, output: String) {
    let path = h.root + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    defer { close(fd) }
    let argv: [String] = ["/usr/bin/python3", Self.screenSaverClient, logind.address] + arguments
    let started: pid_t? = Spawn.start(argv, environment: [:], descriptors: [(parent: fd, child: Int32(1))])
    let pid = try #require(started)
    return (pid, path)
  }

  func said(_ client: (pid: pid_t, output: String)) -> String {
    ((try? String(contentsOfFile: client.output, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
  }

  func end(_ client: (pid: pid_t, output: String)) {
    kill(client.pid, SIGKILL)
    _ = Spawn.wait(client.pid, seconds: 2)
  }

  /// How many connections the daemon has on the test's bus (here its
  /// system bus and its session bus are one).
  func daemonConnections() -> Int {
    let count = """
      import dbus, sys
      bus = dbus.bus.BusConnection(sys.argv[1])
      d = dbus.Interface(bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'), 'org.freedesktop.DBus')
      print(sum(1 for n in d.ListNames() if n.startswith(':') and d.GetConnectionUnixProcessID(n) == int(sys.argv[2])))
      """
    let output = h.run("/usr/bin/python3", ["-c", count, logind.address, String(logind.daemonPID)], input: Data()).stdout
    return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
  }

  /// The user's second session, c2, a GNOME one, as logind announces it.
  func aGNOMESessionComes() {
    logind.python(
      """
      m.AddSession('c2', 'seat0', dbus.UInt32(\(getuid())), '\(Harness.userName)', False, dbus_interface=MOCK)
      session('c2').AddProperty(SESSION, 'Desktop', 'GNOME', dbus_interface=MOCK)
      m.EmitSignal(MANAGER, 'SessionNew', 'so', ['c2', '/org/freedesktop/login1/session/c2'], dbus_interface=MOCK)
      """)
  }

  func aSessionBusIdleSession(_ config: String = "[Idle]\nLockAfterSec=1\n") throws {
    h.environment["DBUS_SESSION_BUS_ADDRESS"] = logind.address
    try aGraphicalSession(configured: config)
  }

  @Test func anApplicationsInhibitorHoldsTheIdleLockOffUntilItsConnectionEnds() throws {
    try aSessionBusIdleSession()
    try logind.startDaemon()
    waitFor("the name answered") { logind.daemonLog.contains("org.freedesktop.ScreenSaver answered by passlockd") }
    // Many applications at once: every call answered, none lost while the
    // daemon asks the bus for a caller's pid.
    var players: [(pid: pid_t, output: String)] = []
    for n in 0..<6 { players.append(try screenSaverClient(["hold", "player\(n)", "Playing"], output: "player\(n).out")) }
    waitFor("every player's cookie") { players.allSatisfy { UInt32(said($0)) != nil } }
    for player in players { end(player) }
    waitFor("their inhibitors gone with them") { !h.passlock("status").stdout.contains("held off by") }
    let browser = try screenSaverClient(["hold", "firefox", "Playing video"], output: "browser.out")
    defer { end(browser) }
    waitFor("the browser's cookie") { UInt32(said(browser)) != nil }
    waitFor("status names it") {
      h.passlock("status").stdout.contains("Idle lock: held off by firefox (Playing video, pid \(browser.pid))")
    }
    setIdleHint(true, secondsAgo: 5)
    // Past LockAfterSec with IdleHint idle: no lock while it holds.
    Thread.sleep(forTimeInterval: 2)
    #expect(logind.lockerPIDs.isEmpty, "an idle lock under the application's inhibitor")
    // Another application cannot end it.
    let other = try screenSaverClient(["uninhibit", said(browser)], output: "other.out")
    waitFor("the other application refused") { said(other) == "org.freedesktop.DBus.Error.InvalidArgs" }
    end(other)
    #expect(h.passlock("status").stdout.contains("held off by firefox"))
    // The browser crashes: its inhibitor goes with its connection.
    end(browser)
    waitFor("locked once its connection ended", seconds: 4) { logind.lockerPIDs.count == 1 }
    #expect(logind.daemonLog.contains("no idle inhibitor any more"))
  }

  @Test func unInhibitEndsIt() throws {
    try aSessionBusIdleSession("[Idle]\nLockAfterSec=3\n")
    try logind.startDaemon()
    waitFor("the name answered") { logind.daemonLog.contains("org.freedesktop.ScreenSaver answered by passlockd") }
    let presenter = try screenSaverClient(["release-after", "2"], output: "presenter.out")
    defer { end(presenter) }
    waitFor("held") { h.passlock("status").stdout.contains("Idle lock: held off by presenter (Showing slides") }
    setIdleHint(true, secondsAgo: 5)
    waitFor("released by UnInhibit", seconds: 4) { said(presenter).hasSuffix("released") }
    #expect(logind.lockerPIDs.isEmpty, "no lock while it held")
    // The connection stays; UnInhibit alone lets the idle time count again.
    waitFor("locked after UnInhibit", seconds: 4) { logind.lockerPIDs.count == 1 }
  }

  /// A GNOME session coming: the name goes back (GNOME's service answers
  /// it), and with it every inhibitor passlockd held.
  @Test func aGNOMESessionComingGetsTheNameGivenBack() throws {
    try aSessionBusIdleSession("[Idle]\nLockAfterSec=30\n")
    try logind.startDaemon()
    waitFor("the name answered") { logind.daemonLog.contains("org.freedesktop.ScreenSaver answered by passlockd") }
    #expect(daemonConnections() == 2, "the system bus and the session bus")
    let browser = try screenSaverClient(["hold", "firefox", "Playing video"], output: "browser.out")
    defer { end(browser) }
    waitFor("held") { h.passlock("status").stdout.contains("held off by firefox") }
    aGNOMESessionComes()
    waitFor("given back") {
      logind.daemonLog.contains("org.freedesktop.ScreenSaver no longer answered by passlockd: released for a desktop that answers it")
    }
    waitFor("its inhibitors with it") { !h.passlock("status").stdout.contains("held off by") }
    // And its session bus connection: nothing the daemon no longer uses
    // stays held (its handlers held the answerer, Embedded Swift having no
    // weak references).
    waitFor("the session bus connection closed") { daemonConnections() == 1 }
  }

  @Test func theNameIsLeftToAnotherOwnerAndToGNOMEAndNotTakenWithoutIdleLocking() throws {
    // Another program's (a desktop's own service).
    let desktop = try screenSaverClient(["own"], output: "desktop.out")
    waitFor("owned") { said(desktop) == "owned" }
    try aSessionBusIdleSession()
    try logind.startDaemon()
    waitFor("left to it") { logind.daemonLog.contains("org.freedesktop.ScreenSaver is another program's on the session bus") }
    #expect(!logind.daemonLog.contains("answered by passlockd"), "\(logind.daemonLog)")
    // Until it lets go: then passlockd answers.
    end(desktop)
    waitFor("taken once it let go") { logind.daemonLog.contains("org.freedesktop.ScreenSaver answered by passlockd") }
    logind.stopDaemon()
    // A GNOME session: not taken (GNOME answers it).
    logind.python("session('\(logind.session)').AddProperty(SESSION, 'Desktop', 'gnome', dbus_interface=MOCK)")
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    // Without idle locking: not taken either.
    logind.stopDaemon()
    logind.python("session('\(logind.session)').UpdateProperties(SESSION, {'Desktop': ''}, dbus_interface=MOCK)")
    try aSessionBusIdleSession("[Idle]\nLockAfterSec=0\n")
    let answeredBefore = logind.daemonLog.components(separatedBy: "answered by passlockd").count
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    #expect(logind.daemonLog.components(separatedBy: "answered by passlockd").count == answeredBefore, "\(logind.daemonLog)")
  }

  /// Taken once per run no more: a desktop's service that replaced
  /// passlockd, and a GNOME session, each get it while they are there;
  /// passlockd answers again once they are gone.
  @Test func theNameIsTakenAgainOnceItsOwnerOrTheDesktopIsGone() throws {
    try aSessionBusIdleSession("[Idle]\nLockAfterSec=30\n")
    try logind.startDaemon()
    let answered = "org.freedesktop.ScreenSaver answered by passlockd"
    let times = { [logind] in logind.daemonLog.components(separatedBy: answered).count - 1 }
    waitFor("the name answered") { times() == 1 }
    let browser = try screenSaverClient(["hold", "firefox", "Playing video"], output: "browser.out")
    defer { end(browser) }
    waitFor("held") { h.passlock("status").stdout.contains("held off by firefox") }
    // A desktop's service takes it over: the inhibitors go with the name.
    let service = try screenSaverClient(["replace"], output: "service.out")
    waitFor("replaced") { said(service) == "owned" }
    waitFor("the name lost") { logind.daemonLog.contains("another program took it (taken again once it lets go)") }
    waitFor("its inhibitors with it") { !h.passlock("status").stdout.contains("held off by") }
    end(service)
    waitFor("answered again once the service let go") { times() == 2 }
    let player = try screenSaverClient(["hold", "mpv", "Playing"], output: "player.out")
    defer { end(player) }
    waitFor("a new inhibitor held") { h.passlock("status").stdout.contains("held off by mpv") }
    // A GNOME session comes and goes.
    aGNOMESessionComes()
    waitFor("given back") { logind.daemonLog.contains("released for a desktop that answers it") }
    #expect(times() == 2)
    logind.python(
      """
      m.RemoveObject('/org/freedesktop/login1/session/c2', dbus_interface=MOCK)
      m.EmitSignal(MANAGER, 'SessionRemoved', 'so', ['c2', '/org/freedesktop/login1/session/c2'], dbus_interface=MOCK)
      """)
    waitFor("answered again once GNOME's session ended") { times() == 3 }
    waitFor("the one session bus connection") { daemonConnections() == 2 }
  }
}
