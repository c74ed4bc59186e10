import Foundation
import Testing

/// The lock screen on a real kernel virtual console: opened fresh, read back
/// through /dev/vcsN, typed into with TIOCSTI. The VT is released afterwards
/// and the active console is never switched.
@Suite(.serialized, .enabled(if: getuid() == 0 && access("/dev/tty0", W_OK) == 0, "needs root and kernel virtual consoles"))
struct VirtualConsoleTests {
  // The kernel's names (linux/vt.h), to be found beside it.
  // swift-format-ignore: AlwaysUseLowerCamelCase
  static let VT_OPENQRY: UInt = 0x5600, VT_GETSTATE: UInt = 0x5603, VT_DISALLOCATE: UInt = 0x5608

  /// A free VT, opened; released (VT_DISALLOCATE) by `release()`.
  final class FreeConsole {
    let number: Int32
    let fd: Int32

    init() throws {
      let console = open("/dev/tty0", O_RDWR | O_NOCTTY)
      defer { close(console) }
      var free: Int32 = -1
      guard ioctl(console, VirtualConsoleTests.VT_OPENQRY, &free) == 0, free > 0 else { throw CocoaError(.featureUnsupported) }
      number = free
      fd = open("/dev/tty\(free)", O_RDWR | O_NOCTTY)
      guard fd >= 0 else { throw CocoaError(.fileNoSuchFile) }
    }

    func release() {
      close(fd)
      let console = open("/dev/tty0", O_RDWR | O_NOCTTY)
      _ = ioctl(console, VirtualConsoleTests.VT_DISALLOCATE, number)
      close(console)
    }

    func write(_ text: String) { _ = text.withCString { Glibc.write(fd, $0, strlen($0)) } }

    /// Types into the console's input queue, as a keyboard would.
    func type(_ text: String) {
      for var byte in Array(text.utf8) { _ = ioctl(fd, UInt(TIOCSTI), &byte) }
    }

    /// The screen as text (/dev/vcsuN: what was written, as Unicode).
    var text: [Unicode.Scalar] {
      let bytes = Self.readDevice("/dev/vcsu\(number)")
      var scalars: [Unicode.Scalar] = []
      var i = 0
      while i + 3 < bytes.count {
        let value: UInt32 = UInt32(bytes[i]) | (UInt32(bytes[i + 1]) << 8) | (UInt32(bytes[i + 2]) << 16)
        scalars.append(Unicode.Scalar(value) ?? " ")
        i += 4
      }
      return scalars
    }

    /// The screen as font positions (/dev/vcsN): what the console can actually show.
    var glyphs: [UInt8] { Self.readDevice("/dev/vcs\(number)") }

    /// Reads a device to its end (FileManager sees size 0 and reads nothing).
    static func readDevice(_ path: String) -> [UInt8] {
      let fd = open(path, O_RDONLY)
      guard fd >= 0 else { return [] }
      defer { close(fd) }
      var out: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { return out }
        out += chunk[..<n]
      }
    }
  }

  static func activeConsole() -> UInt16 {
    let console = open("/dev/tty0", O_RDWR | O_NOCTTY)
    defer { close(console) }
    var state = [UInt16](repeating: 0, count: 3)  // struct vt_stat { v_active, v_signal, v_state }
    _ = ioctl(console, VT_GETSTATE, &state)
    return state[0]
  }

  @Test func theLockScreenDrawsWithConsoleGlyphsAndUnlocks() throws {
    try ConsoleAccess.acquire()
    defer { ConsoleAccess.release() }
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let active = Self.activeConsole()
    let vt = try FreeConsole()
    defer {
      vt.release()
      #expect(Self.activeConsole() == active, "the active console is unchanged")
    }

    // What this font shows for a character it lacks: the replacement glyph.
    vt.write("\u{1b}[H\u{1b}[2Jパ")
    Wait.until(1) { vt.text.first == "パ" }
    let replacement = vt.glyphs.first ?? 0

    var ready: [Int32] = [0, 0]
    pipe(&ready)
    var environment = h.environment
    environment["TERM"] = "linux"
    let pid = try #require(
      Spawn.start(
        [Harness.binDirectory + "/passlock", "lock", "--tty", "/dev/tty\(vt.number)", "--ready-fd", "3"],
        environment: environment, descriptors: [(parent: ready[1], child: Int32(3))]))
    close(ready[1])
    var byte: UInt8 = 0
    var poller = pollfd(fd: ready[0], events: Int16(POLLIN), revents: 0)
    #expect(poll(&poller, 1, 5000) == 1 && read(ready[0], &byte, 1) == 1, "the ready byte arrives after the first frame")
    close(ready[0])

    let screen = String(String.UnicodeScalarView(vt.text))
    #expect(screen.contains("Enter Passcode"))
    #expect(screen.contains("•") == false && screen.contains("○  ○  ○  ○"))
    #expect(screen.contains("┌─────┐") && screen.contains("│  ←  │"))
    // Every non-ASCII character drawn has a glyph of its own in the console font.
    for (scalar, glyph) in zip(vt.text, vt.glyphs) where scalar.value > 127 {
      #expect(glyph >= 128 || glyph < 32, "\(scalar) falls back to ASCII '\(UnicodeScalar(glyph))'")
      #expect(glyph != replacement, "\(scalar) has no glyph in the console font")
    }

    vt.type("1111")
    let shown = { String(String.UnicodeScalarView(vt.text)) }
    #expect(Wait.until(5, every: 20_000) { shown().contains("Passcode didn't match") })
    Wait.pastShake()
    vt.type("25")
    #expect(Wait.until(2) { shown().contains("•  5  ○  ○") }, "a typed digit shows briefly, then •")
    vt.type("80")
    let status = Spawn.wait(pid, seconds: 5)
    if status == nil {
      kill(pid, SIGKILL)
      _ = Spawn.wait(pid, seconds: 1)
    }
    #expect(status == 0, "the right passcode unlocks")
  }
}
