import Foundation
import Testing

/// Fail closed under a compositor's nonsense: passlock-wayland against
/// Tests/Faults/fake_compositor.py, which speaks the wire format itself and
/// logs every request. A keymap announced far larger than its file (a
/// client that maps it faults with SIGBUS), a configure of 0x90000000 × 1
/// and a scale of 2^30 leave the lock standing, nothing unlocked; and
/// `unlock_and_destroy` comes only for a lock the compositor confirmed and
/// only after the passcode, never for keys typed before `locked`.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
struct WaylandFaultTests {
  static let compositor = WaylandEndToEndTests.root.appendingPathComponent("Tests/Faults/fake_compositor.py").path

  let h = Harness()
  var log: String { h.root + "/requests.log" }

  /// The fake compositor on `scenario`, and passlock-wayland connected to
  /// it: their pids and the ready pipe's read end.
  func start(_ scenario: String, _ extra: [String] = []) throws -> (compositor: pid_t, lock: pid_t, ready: Int32) {
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
    h.environment["XDG_RUNTIME_DIR"] = h.root
    h.environment["WAYLAND_DISPLAY"] = "fake-0"
    let socket = h.root + "/fake-0"
    let compositor = try #require(
      Spawn.start(["/usr/bin/python3", Self.compositor, socket, log, scenario], environment: ["PATH": "/usr/bin:/bin"]))
    #expect(Wait.until(10) { access(socket, F_OK) == 0 }, "the fake compositor listens")
    var ready: [Int32] = [0, 0]
    pipe(&ready)
    let lock = try #require(
      Spawn.start(
        [Harness.binDirectory + "/passlock-wayland", "--ready-fd", "3"] + extra, environment: h.environment,
        descriptors: [(parent: ready[1], child: Int32(3))]))
    close(ready[1])
    return (compositor, lock, ready[0])
  }

  /// Ends both, whatever the test left running.
  func stop(_ started: (compositor: pid_t, lock: pid_t, ready: Int32)) {
    for pid in [started.lock, started.compositor] where kill(pid, 0) == 0 {
      kill(pid, SIGKILL)
      _ = Spawn.wait(pid, seconds: 2)
    }
    close(started.ready)
  }

  func requests() -> [String] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  func readyByte(_ fd: Int32, seconds: Int32) -> Bool {
    var byte: UInt8 = 0
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, seconds * 1000) == 1 && read(fd, &byte, 1) == 1
  }

  @Test func nonsenseFromTheCompositorLeavesTheLockStanding() throws {
    let started = try start("nonsense")
    let (lock, ready) = (started.lock, started.ready)
    defer { stop(started) }
    #expect(readyByte(ready, seconds: 10), "locked: the ready byte")
    #expect(Wait.until(10) { requests().contains("> scale 2^30") }, "the nonsense was sent: \(requests())")
    // Whatever it does with it, it does within a second; two to be sure.
    #expect(!Wait.until(2) { Spawn.wait(lock, seconds: 0.01) != nil }, "the lock screen survives the keymap, the size and the scale")
    #expect(requests().contains("ext_session_lock_v1.get_lock_surface"), "\(requests())")
    #expect(!requests().contains("ext_session_lock_v1.unlock_and_destroy"), "nothing unlocked: \(requests())")
  }

  /// Also within an idle lock's grace, where any key after `locked` gives
  /// the session back: the keys sent before `locked` release nothing.
  @Test(arguments: [[], ["--grace-ms", "60000"]])
  func theUnlockComesOnlyAfterLocked(_ extra: [String]) throws {
    let started = try start("late-locked", extra)
    let lock = started.lock
    defer { stop(started) }
    let status = Spawn.wait(lock, seconds: 15)
    #expect(status == 0, "the passcode typed after `locked` unlocks: \(requests())")
    let log = requests()
    let unlocked = try #require(log.firstIndex(of: "ext_session_lock_v1.unlock_and_destroy"), "\(log)")
    let locked = try #require(log.firstIndex(of: "> locked"))
    let typedAfter = try #require(log.firstIndex(of: "> keys after locked"))
    #expect(locked < unlocked && typedAfter < unlocked, "unlocked only after `locked` and the keys typed then: \(log)")
    #expect(log.filter { $0 == "ext_session_lock_v1.unlock_and_destroy" }.count == 1)
    #expect(h.passlock("status").stdout.contains("Failed attempts: 0\n"), "the keys before `locked` were not taken")
  }
}
