import Foundation
import Testing

/// passlock-vt over a real X server on a VT (Xorg with the dummy driver and an
/// inactive modesetting device, so it opens its VT; DESIGN.md). Root only; the
/// server, the VTs it and the lock took, and the active VT are restored.
@Suite(.serialized, .enabled(if: XorgServer.available, "needs root, kernel virtual consoles and Xorg (scripts/install-deps as root)"))
final class XorgConsoleTests {
  typealias VT = VirtualConsoleTests
  let h = Harness()
  let original: UInt16
  let x: XorgServer

  init() throws {
    try ConsoleAccess.acquire()
    original = VT.activeConsole()
    do { x = try XorgServer(h) } catch {
      try? ConsoleHolderTests.activate(Int32(original))
      ConsoleAccess.release()
      throw error
    }
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
  }

  deinit {
    for pid in pids("passlock-vt --vt") { kill(pid, SIGKILL) }
    _ = h.run(Harness.binDirectory + "/passlock-vt", ["--release"], input: Data())
    for pid in pids("passlock lock --tty /dev/tty") { kill(pid, SIGKILL) }
    x.stop()
    try? ConsoleHolderTests.activate(Int32(original))
    ConsoleAccess.release()
  }

  func pids(_ pattern: String) -> [pid_t] {
    h.run("/usr/bin/pgrep", ["-f", pattern], input: Data()).stdout.split(separator: "\n").compactMap { pid_t($0) }
  }

  func waitFor(_ what: String, seconds: Double = 5, _ condition: () -> Bool) {
    let held = Wait.until(seconds, condition)
    #expect(held, "\(what)")
  }

  /// Starts the holder over X's VT; returns its pid and the moment the ready byte came (or nil).
  func lock() throws -> (pid: pid_t, readyAfter: Double?) {
    var ready: [Int32] = [0, 0]
    pipe(&ready)
    let started = Date()
    let pid = try #require(
      Spawn.start(
        [Harness.binDirectory + "/passlock-vt", "--vt", String(x.vt), "--ready-fd", "3"],
        environment: h.environment, descriptors: [(parent: ready[1], child: Int32(3))]))
    close(ready[1])
    var byte: UInt8 = 0
    var poller = pollfd(fd: ready[0], events: Int16(POLLIN), revents: 0)
    let came = poll(&poller, 1, 5_000) == 1 && read(ready[0], &byte, 1) == 1
    close(ready[0])
    return (pid, came ? Date().timeIntervalSince(started) : nil)
  }

  @Test func lockOverXRefusesSwitchingAndGivesXBackAlive() throws {
    let before = try #require(x.screenshotSize(), "a screenshot of X before the lock")
    let (holder, readyAfter) = try lock()
    #expect(readyAfter != nil, "the ready byte once the lock VT is on screen")
    let lockVT = Int32(VT.activeConsole())
    #expect(lockVT != x.vt, "the lock has a VT of its own")
    // chvt back to X: refused while locked.
    ConsoleHolderTests.tryToSwitch(to: x.vt)
    #expect(VT.activeConsole() == lockVT, "VT_ACTIVATE of X's VT does not switch (refused at once: nothing is scheduled)")
    // X's own Ctrl-Alt-Fn (VT_ACTIVATE from the server): refused too.
    let target: Int32 = x.vt == 2 ? 3 : 2
    let wasAllocated = ConsoleHolderTests.isAllocated(target)
    x.xdotool(["key", "ctrl+alt+F\(target)"])
    // X has handled the key once it answers the next client, and the lock
    // screen answers a key of its own: any switch has had its turn.
    #expect(x.answers())
    ConsoleHolderTests.type("7", onVT: lockVT)
    waitFor("the lock screen answers") { ConsoleHolderTests.screen(lockVT).contains("7  ○  ○  ○") }
    ConsoleHolderTests.type("\u{15}", onVT: lockVT)
    waitFor("and clears") { ConsoleHolderTests.screen(lockVT).contains("○  ○  ○  ○") }
    #expect(VT.activeConsole() == lockVT, "X's Ctrl-Alt-F\(target) does not switch")
    if !wasAllocated { XorgServer.disallocate(target) }  // X's VT_ACTIVATE allocated it
    // A wrong passcode keeps it; the right one brings X back.
    ConsoleHolderTests.type("1111", onVT: lockVT)
    waitFor("the wrong passcode refused") { ConsoleHolderTests.screen(lockVT).contains("Passcode didn't match") }
    #expect(kill(holder, 0) == 0 && VT.activeConsole() == lockVT, "a wrong passcode keeps the lock")
    Wait.pastShake()
    ConsoleHolderTests.type("2580", onVT: lockVT)
    #expect(Spawn.wait(holder, seconds: 5) == 0, "the holder exits 0 after the right passcode")
    #expect(VT.activeConsole() == x.vt, "X's VT is back")
    #expect(x.answers(), "X still answers (xdpyinfo)")
    #expect(x.screenshotSize() == before, "a screenshot after, of the same size")
  }

  @Test func aStoppedXServerIsLockedOverWithinASecond() throws {
    x.pause()
    let (holder, readyAfter) = try lock()
    let after = try #require(readyAfter, "locked even though X does not give up its VT")
    #expect(after < 1.0, "within 1 s (took \(Int(after * 1000)) ms)")
    let lockVT = Int32(VT.activeConsole())
    #expect(lockVT != x.vt)
    ConsoleHolderTests.tryToSwitch(to: x.vt)
    #expect(VT.activeConsole() == lockVT, "switching locked (refused at once: nothing is scheduled)")
    x.resume()
    #expect(Wait.holds(for: 0.3) { VT.activeConsole() == lockVT }, "X, running again, does not take its VT back")
    ConsoleHolderTests.type("2580", onVT: lockVT)
    #expect(Spawn.wait(holder, seconds: 5) == 0)
    waitFor("X's VT is back") { VT.activeConsole() == x.vt }
    #expect(x.answers(), "X continued afterwards still works")
  }

  @Test(.enabled(if: LogindMock.available, "needs dbus-daemon and python3-dbusmock"))
  func passlockdLocksAnX11SessionBeforeSleep() throws {
    let logind = try LogindMock(h)
    defer { logind.stopDaemon() }
    logind.python(
      "session('\(logind.session)').UpdateProperties(SESSION, {'Type': 'x11', 'TTY': '', 'VTNr': dbus.UInt32(\(x.vt))}, dbus_interface=MOCK)"
    )
    try logind.startDaemon()
    waitFor("the inhibitor") { logind.inhibitors() == ["passlock"] }
    logind.emitPrepareForSleep(true)
    waitFor("the inhibitor is released") { logind.inhibitors().isEmpty }
    let lockVT = Int32(VT.activeConsole())
    #expect(lockVT != x.vt, "the lock VT was up before the inhibitor went")
    #expect(logind.lockedHint)
    logind.emitPrepareForSleep(false)
    waitFor("the inhibitor again after resume") { logind.inhibitors() == ["passlock"] }
    ConsoleHolderTests.type("2580", onVT: lockVT)
    waitFor("unlocked, X back") { !logind.lockedHint && VT.activeConsole() == x.vt }
    #expect(x.answers())
  }
}
