import Glibc
import PasslockPOSIX

/// The kernel's virtual consoles, through /dev/tty0 and the VT ioctls
/// (linux/vt.h). Everything here needs root or the console's owner.
struct Console {
  static let openQuery: UInt = 0x5600  // VT_OPENQRY
  static let getState: UInt = 0x5603  // VT_GETSTATE
  static let activate: UInt = 0x5606  // VT_ACTIVATE
  static let waitActive: UInt = 0x5607  // VT_WAITACTIVE
  static let disallocate: UInt = 0x5608  // VT_DISALLOCATE
  static let lockSwitch: UInt = 0x560B  // VT_LOCKSWITCH
  static let unlockSwitch: UInt = 0x560C  // VT_UNLOCKSWITCH

  let fd: Int32

  init() throws(HolderError) {
    fd = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { throw .system("open /dev/tty0", errno) }
  }

  /// The VT on screen now.
  func active() -> Int32 {
    var state: [UInt16] = [0, 0, 0]  // struct vt_stat { v_active, v_signal, v_state }
    _ = ioctl(fd, Console.getState, &state)
    return Int32(state[0])
  }

  /// A VT nobody has open.
  func free() throws(HolderError) -> Int32 {
    var number: Int32 = -1
    guard ioctl(fd, Console.openQuery, &number) == 0, number > 0 else { throw .system("VT_OPENQRY", errno) }
    return number
  }

  static let setMode: UInt = 0x5602  // VT_SETMODE
  static let releaseDisplay: UInt = 0x5605  // VT_RELDISP

  /// Switches to `vt`, waiting at most `seconds`. A display server holds its
  /// VT in VT_PROCESS mode and must acknowledge the release; one that is
  /// stopped or hung never does, and VT_WAITACTIVE would wait forever with
  /// the session on screen. Past the deadline the release is acknowledged
  /// for it as root (VT_RELDISP on its VT, which CAP_SYS_TTY_CONFIG allows,
  /// its own mode kept, so it gets its VT back as after any switch); if even
  /// that does not switch, its VT goes back to VT_AUTO, and then it fails.
  func switchTo(_ vt: Int32, within seconds: Double = 0.5) throws(HolderError) {
    let from = active()
    guard ioctl(fd, Console.activate, vt) == 0 else { throw .system("VT_ACTIVATE \(vt)", errno) }
    if waitUntilActive(vt, seconds: seconds) { return }
    let stuck = open("/dev/tty\(from)", O_RDWR | O_NOCTTY | O_CLOEXEC)
    defer { if stuck >= 0 { close(stuck) } }
    if stuck >= 0, ioctl(stuck, Console.releaseDisplay, Int32(1)) == 0, waitUntilActive(vt, seconds: 0.5) { return }
    var automatic: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]  // struct vt_mode, mode VT_AUTO: all zero
    if stuck >= 0, ioctl(stuck, Console.setMode, &automatic) == 0, ioctl(fd, Console.activate, vt) == 0,
      waitUntilActive(vt, seconds: 0.5)
    {
      return
    }
    throw .stuck("VT \(from) does not let go of the console (its display server does not answer)")
  }

  /// Polls VT_GETSTATE: VT_WAITACTIVE has no timeout.
  func waitUntilActive(_ vt: Int32, seconds: Double) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while active() != vt {
      if monotonicSeconds() > deadline { return false }
      usleep(5_000)
    }
    return true
  }

  func monotonicSeconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }

  func lockSwitching() throws(HolderError) {
    guard ioctl(fd, Console.lockSwitch, Int32(1)) == 0 else { throw .system("VT_LOCKSWITCH", errno) }
  }

  func unlockSwitching() { _ = ioctl(fd, Console.unlockSwitch, Int32(1)) }

  func release(_ vt: Int32) { _ = ioctl(fd, Console.disallocate, vt) }
}

/// Kernel knobs the holder mutes while locked and restores after: the console
/// log level (so kernel messages do not scribble over the lock screen) and
/// SysRq, where the kernel has it.
struct KernelKnobs: Equatable {
  var consoleLogLevel: String
  var sysrq: String?

  static let printk = "/proc/sys/kernel/printk"
  static let sysrqPath = "/proc/sys/kernel/sysrq"

  static func current() -> KernelKnobs {
    let level = read(printk)?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? "4"
    return KernelKnobs(consoleLogLevel: level, sysrq: read(sysrqPath)?.filter { !$0.isWhitespace })
  }

  static func mute() {
    write(printk, "1")
    if access(sysrqPath, F_OK) == 0 { write(sysrqPath, "0") }
  }

  func restore() {
    KernelKnobs.write(KernelKnobs.printk, consoleLogLevel)
    if let sysrq { KernelKnobs.write(KernelKnobs.sysrqPath, sysrq) }
  }

  static func read(_ path: String, limit: Int = 256) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: limit)
    let n = Glibc.read(fd, &buffer, buffer.count)
    return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : nil
  }

  static func write(_ path: String, _ value: String) {
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = value.withCString { Glibc.write(fd, $0, strlen($0)) }
    close(fd)
  }
}

enum HolderError: Error, CustomStringConvertible {
  case usage(String)
  case refused(String)
  case system(String, Int32)
  /// The display server on screen does not give up the VT; exit status 3.
  case stuck(String)

  var description: String {
    switch self {
    case .usage(let text), .refused(let text), .stuck(let text): return text
    case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
    }
  }
}
