import Foundation
import PasslockPOSIX
import Testing

/// fprintd with its virtual reader on a private system bus.
final class FprintdBed {
  static let daemon = "/usr/libexec/fprintd"
  static var available: Bool {
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: daemon)
      && FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/security/pam_fprintd.so")
      && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/polkitd.py")
      && LogindMock.available
  }

  let h: Harness
  var socket: String { h.root + "/fp.sock" }
  /// Standard output and error to /dev/null.
  let quiet = [(parent: LogindMock.devNull, child: Int32(1)), (parent: LogindMock.devNull, child: Int32(2))]
  private var pids: [String: pid_t] = [:]

  init(_ harness: Harness) throws {
    h = harness
    pids["bus"] = try LogindMock.startSystemBus(at: h.root + "/fpbus")
    h.environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(h.root)/fpbus"
    pids["polkit"] = try #require(
      Spawn.start(
        ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"], environment: h.environment, descriptors: quiet))
    // The polkit template denies everything until told otherwise.
    try LogindMock.waitUntil(seconds: 10) {
      self.python(
        "o = bus.get_object('org.freedesktop.PolicyKit1', '/org/freedesktop/PolicyKit1/Authority')\n"
          + "o.AllowUnknown(True, dbus_interface='org.freedesktop.DBus.Mock'); print('ok')"
      ).contains("ok")
    }
    try FileManager.default.createDirectory(atPath: h.root + "/fprintd", withIntermediateDirectories: true)
    try startFprintd()
  }

  /// fprintd on the private bus, its prints kept in the bed's state directory.
  func startFprintd() throws {
    var environment = h.environment
    environment["FP_VIRTUAL_DEVICE"] = socket
    environment["STATE_DIRECTORY"] = h.root + "/fprintd"
    pids["fprintd"] = try #require(Spawn.start([Self.daemon, "--no-timeout"], environment: environment, descriptors: quiet))
    try LogindMock.waitUntil(seconds: 10) {
      self.python(
        "m = bus.get_object('net.reactivated.Fprint', '/net/reactivated/Fprint/Manager')\n"
          + "print(len(m.GetDevices(dbus_interface='net.reactivated.Fprint.Manager')))"
      ).contains("1")
    }
  }

  deinit {
    for name in ["fprintd", "polkit", "bus"] { stop(name) }
  }

  private func stop(_ name: String) {
    guard let pid = pids[name] else { return }
    kill(pid, SIGKILL)
    _ = Spawn.wait(pid, seconds: 2)
    pids[name] = nil
  }

  func stopFprintd() { stop("fprintd") }

  @discardableResult
  func python(_ code: String) -> String {
    h.run("/usr/bin/python3", ["-c", "import dbus\nbus = dbus.SystemBus()\n" + code], input: Data()).stdout
  }

  /// One command to the virtual reader; its socket exists only while fprintd
  /// has the device claimed.
  func send(_ command: String) {
    Wait.until(10, every: 20_000) { FileManager.default.fileExists(atPath: socket) }
    _ = h.run(
      "/usr/bin/python3",
      [
        "-c",
        """
        import socket, sys
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()); s.close()
        """, socket, command,
      ], input: Data())
  }

  /// A scan as pam_fprintd's verification expects it: a scan queued before
  /// verification starts is lost, so the reader sleeps a little first.
  func scan(_ print: String) {
    send("SLEEP 100")
    send("SCAN \(print)")
  }

  /// Enrolls finger-A as root's right index finger (five swipes).
  func enroll() throws {
    // Its progress, a line per stage (line-buffered: stdbuf), says when the
    // reader waits for the next swipe.
    let progress = h.root + "/enroll.out"
    let output = open(progress, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    defer { close(output) }
    let enrolling = try #require(
      Spawn.start(
        ["/usr/bin/stdbuf", "-oL", "/usr/bin/fprintd-enroll", "-f", "right-index-finger", "root"], environment: h.environment,
        descriptors: [(parent: output, child: Int32(1)), (parent: LogindMock.devNull, child: Int32(2))]))
    let stagesPassed = { () -> Int? in
      guard let text = try? String(contentsOfFile: progress, encoding: .utf8), text.contains("Enrolling") else { return nil }
      return text.components(separatedBy: "enroll-stage-passed").count - 1
    }
    for stage in 0..<5 {
      #expect(Wait.until(10, every: 20_000) { stagesPassed() == stage }, "enrollment stage \(stage + 1) started")
      send("SCAN finger-A")
    }
    #expect(Spawn.wait(enrolling, seconds: 10) == 0, "fprintd-enroll completed")
    // The virtual reader queues what it is sent: a CI run once saw the next
    // verification match at once, before any swipe was sent, so a swipe was
    // left over. A fresh fprintd starts with an empty queue, the print on disk.
    stop("fprintd")
    try startFprintd()
  }
}
