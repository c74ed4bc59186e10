import Foundation
import Testing

/// One Xorg on a free VT, display :47 (or the next free one).
final class XorgServer {
  static let binary = "/usr/lib/xorg/Xorg"
  static var available: Bool {
    getuid() == 0 && access("/dev/tty0", W_OK) == 0 && FileManager.default.isExecutableFile(atPath: binary)
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/xdpyinfo")
  }

  let h: Harness
  let vt: Int32
  let display: String
  private var pid: pid_t = 0

  init(_ harness: Harness) throws {
    h = harness
    let console = open("/dev/tty0", O_RDWR | O_NOCTTY)
    var free: Int32 = -1
    _ = ioctl(console, VirtualConsoleTests.VT_OPENQRY, &free)
    close(console)
    guard free > 0 else { throw CocoaError(.featureUnsupported) }
    vt = free
    var number = 47
    while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") { number += 1 }
    display = ":\(number)"
    let config = Self.configFile
    pid = try #require(
      Spawn.start(
        [Self.binary, display, "vt\(vt)", "-config", config, "-noreset", "-nolisten", "tcp", "-logfile", h.root + "/xorg.log"],
        environment: ["PATH": "/usr/bin:/bin"],
        descriptors: [(parent: LogindMock.devNull, child: Int32(1)), (parent: LogindMock.devNull, child: Int32(2))]))
    guard Wait.until(10, every: 50_000, { answers() && VirtualConsoleTests.activeConsole() == vt }) else {
      stop()
      throw CocoaError(.executableLoad)
    }
  }

  func answers() -> Bool {
    h.run("/usr/bin/timeout", ["3", "/usr/bin/xdpyinfo", "-display", display], input: Data()).status == 0
  }

  func xdotool(_ arguments: [String]) {
    _ = h.run("/usr/bin/env", ["DISPLAY=\(display)", "/usr/bin/timeout", "3", "/usr/bin/xdotool"] + arguments, input: Data())
  }

  /// The root window's size in a screenshot (ImageMagick's import), "WxH".
  func screenshotSize() -> String? {
    let file = h.root + "/shot-\(UUID().uuidString.prefix(6)).png"
    guard h.run("/usr/bin/import", ["-display", display, "-window", "root", file], input: Data()).status == 0 else { return nil }
    let size = h.run("/usr/bin/identify", ["-format", "%wx%h", file], input: Data()).stdout
    return size.isEmpty ? nil : size
  }

  func pause() { kill(pid, SIGSTOP) }
  func resume() { kill(pid, SIGCONT) }

  func stop() {
    guard pid > 0 else { return }
    kill(pid, SIGCONT)
    kill(pid, SIGTERM)
    if Spawn.wait(pid, seconds: 5) == nil {
      kill(pid, SIGKILL)
      _ = Spawn.wait(pid, seconds: 2)
    }
    pid = 0
    Self.disallocate(vt)
  }

  static func disallocate(_ vt: Int32) {
    let console = open("/dev/tty0", O_RDWR | O_NOCTTY)
    _ = ioctl(console, VirtualConsoleTests.VT_DISALLOCATE, vt)
    close(console)
  }

  /// Tests/Fixtures/xorg-dummy.conf: the dummy driver, and an inactive
  /// modesetting device so that Xorg opens its VT.
  static let configFile = WaylandEndToEndTests.root.appendingPathComponent("Tests/Fixtures/xorg-dummy.conf").path
}
