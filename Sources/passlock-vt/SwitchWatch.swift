import CLinux
import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Keeps the lock VT on screen for the whole lock. VT_LOCKSWITCH refuses new
/// switch requests, but one made before it (Ctrl-Alt-Fn a moment earlier)
/// is still carried out once the VT on screen lets go — a display server
/// may take longer to do so than any settle time — and would leave the
/// session on screen behind a locked console. The kernel announces every
/// switch on /sys/class/tty/tty0/active (sysfs poll, POLLPRI): on each, a VT
/// other than the lock VT is switched away from at once.
struct SwitchWatch {
  static let activeFile = "/sys/class/tty/tty0/active"
  let fd: Int32

  /// nil where the kernel has no such file: the lock then relies on the
  /// settle watch in `Holder.lock` alone.
  init?() {
    fd = passlock_open(Self.activeFile, O_RDONLY | O_CLOEXEC, 0)
    guard fd >= 0 else { return nil }
    _ = Self.read(fd)  // a sysfs attribute notifies only after it was read
  }

  /// "tty3" → 3.
  static func read(_ fd: Int32) -> Int32? {
    var buffer = [UInt8](repeating: 0, count: 32)
    let n = pread(fd, &buffer, buffer.count, 0)
    guard n > 3 else { return nil }
    return Int32(String(decoding: buffer[3..<n], as: UTF8.self).filter { $0.isNumber })
  }

  /// Waits for lock screen `pid` to exit, bringing the lock VT back whenever
  /// something else comes on screen meanwhile; its wait status (nil if
  /// waitpid cannot report one).
  func supervise(_ pid: pid_t, holder: Holder) -> Int32? {
    guard let exited = try? processDescriptor(pid) else { return reapLockScreen(pid) }
    defer { close(exited) }
    var fds = [pollfd(fd: exited, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLPRI | POLLERR), revents: 0)]
    // Whatever happened before the first wait (the lock screen before this
    // one may have died right after a switch) is looked at first.
    var check = true
    while true {
      if check {
        // Reading is also what re-arms the notification; if it fails, stop
        // watching rather than spin on a notification never consumed.
        guard let active = Self.read(fd) else { return reapLockScreen(pid) }
        if active != holder.lockVT { try? holder.console.takeBack(holder.lockVT) }
      }
      fds[0].revents = 0
      fds[1].revents = 0
      if poll(&fds, 2, -1) < 0 {
        guard errno == EINTR else { return reapLockScreen(pid) }
        continue
      }
      check = fds[1].revents != 0
      if fds[0].revents != 0 { return reapLockScreen(pid) }
    }
  }
}
