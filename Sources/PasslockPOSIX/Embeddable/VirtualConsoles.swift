import CLinux
import Glibc

/// The kernel's virtual consoles through a descriptor of /dev/tty0 or of one
/// VT: the VT ioctls of console_ioctl(2), each named after what it does and
/// throwing the call's SystemError. Needs root, or the console's owner.
public struct VirtualConsoles {
  public let fd: Int32

  /// Opens `device` (/dev/tty0: the consoles as a whole).
  public init(device: String = "/dev/tty0") throws(SystemError) {
    fd = passlock_open(device, O_RDWR | O_NOCTTY | O_CLOEXEC, 0)
    guard fd >= 0 else { throw SystemError("open", path: device) }
  }

  /// VT_GETSTATE: the VT on screen.
  public func active() throws(SystemError) -> Int32 {
    var active: UInt16 = 0
    guard passlock_vt_active(fd, &active) == 0 else { throw SystemError("VT_GETSTATE") }
    return Int32(active)
  }

  /// VT_OPENQRY: the first VT nobody has open.
  public func firstFree() throws(SystemError) -> Int32 {
    var vt: Int32 = -1
    guard passlock_vt_first_free(fd, &vt) == 0 else { throw SystemError("VT_OPENQRY") }
    guard vt > 0 else { throw SystemError("VT_OPENQRY", errno: EBUSY) }
    return vt
  }

  /// VT_ACTIVATE: asks for a switch to `vt`; it happens once the VT on
  /// screen lets go (at once, unless a display server holds it in VT_PROCESS mode).
  public func activate(_ vt: Int32) throws(SystemError) {
    guard passlock_vt_activate(fd, vt) == 0 else { throw SystemError("VT_ACTIVATE \(vt)") }
  }

  /// VT_RELDISP on this descriptor's VT: acknowledges (true) or refuses
  /// (false) the release of the display a pending switch asked for.
  public func releaseDisplay(acknowledge: Bool) throws(SystemError) {
    guard passlock_vt_release_display(fd, acknowledge ? 1 : 0) == 0 else { throw SystemError("VT_RELDISP") }
  }

  /// VT_LOCKSWITCH: no VT switch, from anyone, until unlocked.
  public func lockSwitching() throws(SystemError) {
    guard passlock_vt_lock_switching(fd) == 0 else { throw SystemError("VT_LOCKSWITCH") }
  }

  /// VT_UNLOCKSWITCH.
  public func unlockSwitching() throws(SystemError) {
    guard passlock_vt_unlock_switching(fd) == 0 else { throw SystemError("VT_UNLOCKSWITCH") }
  }

  /// VT_DISALLOCATE: frees `vt` (EBUSY while it is open or on screen).
  public func disallocate(_ vt: Int32) throws(SystemError) {
    guard passlock_vt_disallocate(fd, vt) == 0 else { throw SystemError("VT_DISALLOCATE \(vt)") }
  }
}
