import Foundation
import PasslockBus
import Testing

/// A private dbus-daemon with python-dbusmock's logind template on it (run by
/// /usr/bin/python3), a pty standing in for a session's TTY, and passlockd
/// pointed at them through DBUS_SYSTEM_BUS_ADDRESS.
final class LogindMock: @unchecked Sendable {  // used from one test at a time
  let h: Harness
  var address: String { "unix:path=\(h.root)/bus" }
  private var busPID: pid_t = 0
  private var mockPID: pid_t = 0
  var daemonPID: pid_t = 0
  let master: Int32
  let tty: String
  let session = "c1"

  static var available: Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
      && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/logind.py")
  }

  init(_ harness: Harness) throws {
    h = harness
    // posix_openpt and friends are hidden behind _XOPEN_SOURCE; their ioctls are not.
    master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    var unlock: Int32 = 0
    _ = ioctl(master, 0x4004_5431, &unlock)  // TIOCSPTLCK
    var number: UInt32 = 0
    _ = ioctl(master, 0x8004_5430, &number)  // TIOCGPTN
    tty = "/dev/pts/\(number)"
    busPID = try Self.startSystemBus(at: h.root + "/bus")
    h.environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
    h.environment["XDG_RUNTIME_DIR"] = h.root + "/run"
    try FileManager.default.createDirectory(atPath: h.root + "/run", withIntermediateDirectories: true)
    mockPID = try #require(
      Spawn.start(
        ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "logind"], environment: h.environment,
        descriptors: [(parent: Self.devNull, child: Int32(1)), (parent: Self.devNull, child: Int32(2))]))
    try Self.waitUntil(seconds: 10) { self.python("print(m.ListSessions(dbus_interface=MANAGER) is not None)").contains("True") }

    _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    _ = python(
      """
      m.AddSession('\(session)', 'seat0', dbus.UInt32(\(getuid())), '\(Harness.userName)', True, dbus_interface=MOCK)
      session('\(session)').UpdateProperties(SESSION, {'TTY': '\(tty)', 'VTNr': dbus.UInt32(0)}, dbus_interface=MOCK)
      """)
  }

  deinit {
    stopDaemon()
    for pid in [mockPID, busPID] where pid > 0 {
      kill(pid, SIGKILL)
      _ = Spawn.wait(pid, seconds: 2)
    }
    close(master)
  }

  static let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)

  /// A private dbus-daemon of type "system" that allows everything, listening
  /// at `socket` (its config file goes beside it); returns once it listens.
  static func startSystemBus(at socket: String) throws -> pid_t {
    let config = """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig><type>system</type><listen>unix:path=\(socket)</listen><auth>EXTERNAL</auth>
      <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>
      <allow receive_sender="*"/></policy></busconfig>
      """
    try config.write(toFile: socket + ".conf", atomically: true, encoding: .utf8)
    let pid = try #require(
      Spawn.start(
        ["/usr/bin/dbus-daemon", "--config-file=\(socket).conf", "--nofork", "--nopidfile"],
        environment: ["PATH": "/usr/bin:/bin"], descriptors: [(parent: devNull, child: Int32(1)), (parent: devNull, child: Int32(2))]))
    try waitUntil { FileManager.default.fileExists(atPath: socket) }
    return pid
  }

  static func waitUntil(seconds: Double = 5, _ condition: () -> Bool) throws {
    guard Wait.until(seconds, every: 10_000, condition) else { throw CocoaError(.executableLoad) }
  }

  /// Runs Python with `m` (the manager object), `session(id)` and the
  /// interface names in scope, on the private bus.
  @discardableResult
  func python(_ code: String) -> String {
    let prelude = """
      import dbus
      bus = dbus.SystemBus()
      MOCK = 'org.freedesktop.DBus.Mock'; MANAGER = 'org.freedesktop.login1.Manager'; SESSION = 'org.freedesktop.login1.Session'
      m = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1')
      def session(i): return bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1/session/' + i)

      """
    return h.run("/usr/bin/python3", ["-c", prelude + code], input: Data()).stdout
  }

  /// logind leaves the bus and comes back (a new mock with the same session).
  func restartMock() {
    kill(mockPID, SIGKILL)
    _ = Spawn.wait(mockPID, seconds: 2)
    mockPID =
      Spawn.start(
        ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "logind"], environment: h.environment,
        descriptors: [(parent: Self.devNull, child: Int32(1)), (parent: Self.devNull, child: Int32(2))]) ?? 0
    try? Self.waitUntil(seconds: 10) { self.python("print(m.ListSessions(dbus_interface=MANAGER) is not None)").contains("True") }
    python(
      """
      m.AddSession('\(session)', 'seat0', dbus.UInt32(\(getuid())), '\(Harness.userName)', True, dbus_interface=MOCK)
      session('\(session)').UpdateProperties(SESSION, {'TTY': '\(tty)', 'VTNr': dbus.UInt32(0)}, dbus_interface=MOCK)
      """)
  }

  /// Makes the session a console session on VT `vt`.
  func moveSession(toVT vt: Int32) {
    python("session('\(session)').UpdateProperties(SESSION, {'TTY': 'tty\(vt)', 'VTNr': dbus.UInt32(\(vt))}, dbus_interface=MOCK)")
  }

  func emitPrepareForSleep(_ going: Bool) {
    python("m.EmitSignal(MANAGER, 'PrepareForSleep', 'b', [\(going ? "True" : "False")], dbus_interface=MOCK)")
  }

  /// The session object's own Lock (the mock emits logind's Lock signal).
  func lockSession() { python("session('\(session)').Lock(dbus_interface=SESSION)") }

  // MARK: Fast reads over our own bus client (PasslockBus)

  lazy var bus: Bus = {
    setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1)
    return try! Bus()
  }()

  func inhibitors() -> [String] {
    guard
      let reply = try? bus.call("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "ListInhibitors"),
      (try? reply.enter("a", "(ssssuu)")) == true
    else { return [] }
    var who: [String] = []
    while (try? reply.enter("r", "ssssuu")) == true {
      _ = try? reply.string()
      who.append((try? reply.string()) ?? "")
      for _ in 0..<2 { _ = try? reply.string() }
      for _ in 0..<2 { _ = try? reply.uint32() }
      try? reply.exit()
    }
    return who
  }

  var lockedHint: Bool {
    (try? bus.property(
      "org.freedesktop.login1", "/org/freedesktop/login1/session/\(session)", "org.freedesktop.login1.Session", "LockedHint"
    ).bool()) ?? false
  }

  // MARK: The daemon and the pty

  func startDaemon() throws {
    let log = open(h.root + "/daemon.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    defer { close(log) }
    let before = daemonLog.components(separatedBy: "passlockd ready").count
    daemonPID = try #require(
      Spawn.start([Harness.binDirectory + "/passlockd"], environment: h.environment, descriptors: [(parent: log, child: Int32(2))]))
    // READY=1's moment: the bus, the sessions and the inhibitor are in place.
    try Self.waitUntil(seconds: 10) { self.daemonLog.components(separatedBy: "passlockd ready").count > before }
  }

  /// SIGKILL for the daemon; its lockers outlive it unless `andLockers`.
  func stopDaemon(andLockers: Bool = true) {
    guard daemonPID > 0 else { return }
    if andLockers { for child in lockerPIDs { kill(child, SIGKILL) } }
    kill(daemonPID, SIGKILL)
    _ = Spawn.wait(daemonPID, seconds: 2)
    daemonPID = 0
  }

  var daemonLog: String { (try? String(contentsOfFile: h.root + "/daemon.log", encoding: .utf8)) ?? "" }

  /// The daemon's `passlock lock` children.
  var lockerPIDs: [pid_t] {
    guard daemonPID > 0 else { return [] }
    let out = h.run("/usr/bin/pgrep", ["-P", String(daemonPID), "-x", "passlock"], input: Data()).stdout
    return out.split(separator: "\n").compactMap { pid_t($0) }
  }

  /// Everything the pty has received so far.
  func drain() -> String {
    var data = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = read(master, &buffer, buffer.count)
      if n <= 0 { break }
      data += buffer[..<n]
    }
    return String(decoding: data, as: UTF8.self)
  }

  func type(_ text: String) { _ = text.withCString { write(master, $0, strlen($0)) } }
}
