import CLinux
import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// The console holder's way with the kernel's virtual consoles: switching
/// that is bounded even when a display server does not let go, over the VT
/// ioctls that PasslockPOSIX's VirtualConsoles names. Needs root or the
/// console's owner.
struct Console {
  let consoles: VirtualConsoles

  init() throws(HolderError) {
    do { consoles = try VirtualConsoles() } catch { throw .system(error) }
  }

  /// The VT on screen now (0 when the kernel will not say).
  func active() -> Int32 { (try? consoles.active()) ?? 0 }

  /// A VT nobody has open.
  func free() throws(HolderError) -> Int32 {
    do { return try consoles.firstFree() } catch { throw .system(error) }
  }

  /// Switches to `vt`, waiting at most `seconds`. A display server holds its
  /// VT in VT_PROCESS mode and must acknowledge the release; one that is
  /// stopped or hung never does, and VT_WAITACTIVE would wait forever with
  /// the session on screen. Past the deadline, and only when every process
  /// holding its VT is stopped or in uninterruptible sleep (so none can take
  /// the VT back behind the lock's back), the release is acknowledged for it
  /// as root (VT_RELDISP on its VT, which CAP_SYS_TTY_CONFIG allows; its own
  /// mode is kept, so it gets its VT back as after any switch). A server that
  /// runs but does not answer is not overridden: the pending switch is
  /// cancelled and the lock fails, loudly.
  func switchTo(_ vt: Int32, within seconds: Double = 0.5) throws(HolderError) {
    let from = active()
    do { try consoles.activate(vt) } catch { throw .system(error) }
    if waitUntilActive(vt, seconds: seconds, reissuing: true) { return }
    let stuck = try? VirtualConsoles(device: "/dev/tty\(from)")
    defer { if let stuck { close(stuck.fd) } }
    let holders = Self.processes(holding: "/dev/tty\(from)")
    if let stuck, !holders.isEmpty, holders.allSatisfy(Self.isStopped),
      (try? stuck.releaseDisplay(acknowledge: true)) != nil, waitUntilActive(vt, seconds: 0.3)
    {
      return
    }
    try? stuck?.releaseDisplay(acknowledge: false)  // cancel the pending switch
    throw .stuck("VT \(from) does not let go of the console (its display server does not answer)")
  }

  /// Processes with `device` open (as root: every /proc/PID/fd is readable).
  static func processes(holding device: String) -> [pid_t] {
    (Directory.names("/proc") ?? []).compactMap { name in
      guard let pid = pid_t(name), pid != getpid(), let fds = Directory.names("/proc/\(pid)/fd") else { return nil }
      return fds.contains { Directory.linkTarget("/proc/\(pid)/fd/\($0)") == device } ? pid : nil
    }
  }

  /// Stopped (T, t) or in uninterruptible sleep (D): it cannot act on its VT now.
  static func isStopped(_ pid: pid_t) -> Bool {
    guard let state = ForegroundJob.statFields(pid)?.first else { return false }
    return state == "T" || state == "t" || state == "D"
  }

  /// Polls VT_GETSTATE: VT_WAITACTIVE has no timeout. With `reissuing`,
  /// VT_ACTIVATE is repeated every 20 ms: the kernel keeps one pending switch,
  /// and a request from someone else (Ctrl-Alt-Fn) made at the same moment
  /// replaces ours.
  func waitUntilActive(_ vt: Int32, seconds: Double, reissuing: Bool = false) -> Bool {
    // Woken by the kernel's notice of the switch (sysfs poll on
    // tty0/active), not by a timer: switching is locked right after it, so
    // a request made just after the switch finds it locked.
    let notices = passlock_open(SwitchWatch.activeFile, O_RDONLY | O_CLOEXEC, 0)
    defer { if notices >= 0 { close(notices) } }
    let start = monotonicSeconds()
    var asked = start
    while true {
      if notices >= 0 { _ = SwitchWatch.read(notices) }  // read first: it arms the next notice
      if active() == vt { return true }
      let now = monotonicSeconds()
      if now > start + seconds { return false }
      if reissuing && now - asked > 0.02 {
        try? consoles.activate(vt)
        asked = now
      }
      if notices >= 0 {
        // A display server that answers does so within a few ms; the
        // request is repeated every 20 ms.
        var notice = pollfd(fd: notices, events: Int16(POLLPRI | POLLERR), revents: 0)
        _ = poll(&notice, 1, 20)
      } else {
        usleep(500)
      }
    }
  }

  func lockSwitching() throws(HolderError) {
    do { try consoles.lockSwitching() } catch { throw .system(error) }
  }

  func unlockSwitching() { try? consoles.unlockSwitching() }

  /// Brings `vt` back on screen after something else came there, and locks
  /// switching again even when the switch fails (then throws its error).
  func takeBack(_ vt: Int32) throws(HolderError) {
    unlockSwitching()
    do { try switchTo(vt) } catch {
      try? lockSwitching()
      throw error  // the switch's own error (a stuck display server is exit 3)
    }
    try lockSwitching()
  }

  func release(_ vt: Int32) { try? consoles.disallocate(vt) }
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
    let level = SmallFile.read(printk)?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? "4"
    return KernelKnobs(consoleLogLevel: level, sysrq: SmallFile.read(sysrqPath)?.filter { !$0.isWhitespace })
  }

  static func mute() {
    SmallFile.write(printk, "1")
    if access(sysrqPath, F_OK) == 0 { SmallFile.write(sysrqPath, "0") }
  }

  func restore() {
    SmallFile.write(KernelKnobs.printk, consoleLogLevel)
    if let sysrq { SmallFile.write(KernelKnobs.sysrqPath, sysrq) }
  }
}

enum HolderError: Error, CustomStringConvertible {
  case usage(String)
  case refused(String)
  case system(SystemError)
  /// The display server on screen does not give up the VT.
  case stuck(String)
  /// Another user has a session on the seat.
  case sharedSeat(String)

  var description: String {
    switch self {
    case .usage(let text), .refused(let text), .stuck(let text), .sharedSeat(let text): return text
    case .system(let error): return error.description
    }
  }

  /// The status passlock-vt exits with (passlockd reads it).
  var exitStatus: ConsoleHolder.Exit {
    switch self {
    case .usage: return .usage
    case .refused, .system: return .refused
    case .stuck: return .stuck
    case .sharedSeat: return .sharedSeat
    }
  }
}
