import Glibc

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

  func switchTo(_ vt: Int32) throws(HolderError) {
    guard ioctl(fd, Console.activate, vt) == 0 else { throw .system("VT_ACTIVATE \(vt)", errno) }
    guard ioctl(fd, Console.waitActive, vt) == 0 else { throw .system("VT_WAITACTIVE \(vt)", errno) }
  }

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

  static func read(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 256)
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

  var description: String {
    switch self {
    case .usage(let text), .refused(let text): return text
    case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
    }
  }
}
