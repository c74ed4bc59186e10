import CLinux
import Glibc

/// The foreground process group of a terminal we do not control (a session's
/// TTY taken over with `--tty`): while the lock is up it is stopped, so the
/// session's shell cannot read keys meant for the lock screen; it is continued
/// after a real unlock. If the lock screen dies, it stays stopped: fail closed.
/// (A terminal multiplexer continues stopped pane processes on its own; there
/// the session's shell can still compete for input. The daemon's targets are
/// dedicated ttys and serial consoles, where nothing does that.)
public struct ForegroundJob {
  public let processGroup: pid_t

  /// Finds the group through /proc (tcgetpgrp only works on one's own
  /// controlling terminal): the tpgid of any process whose tty is `fd`'s device.
  /// `leader`, a process on that terminal (the session's leader), answers
  /// with one read (its tpgid); without it, or when it is not on that
  /// terminal (any more), every process is looked at, unless `scanning` is false.
  public static func of(_ fd: FileDescriptor, leader: pid_t? = nil, scanning: Bool = true) -> ForegroundJob? {
    guard let device = try? fd.status().st_rdev, device != 0 else { return nil }
    if let leader, let fields = statFields(leader), fields.count > 5, UInt64(fields[4]) == UInt64(device),
      let group = pid_t(fields[5]), group > 0
    {
      return group == getpgrp() ? nil : ForegroundJob(processGroup: group)
    }
    guard scanning, let processes = Directory.names("/proc") else { return nil }
    for name in processes {
      guard let pid = pid_t(name), pid != getpid() else { continue }
      guard let fields = statFields(pid), fields.count > 5, UInt64(fields[4]) == UInt64(device),
        let group = pid_t(fields[5]), group > 0, group != getpgrp()
      else { continue }
      return ForegroundJob(processGroup: group)
    }
    return nil
  }

  /// The fields of /proc/PID/stat after the command name: state, ppid, pgrp,
  /// session, tty_nr, tpgid, …
  public static func statFields(_ pid: pid_t) -> [Substring]? {
    let fd = passlock_open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC, 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 1024)
    let n = read(fd, &buffer, buffer.count)
    guard n > 0 else { return nil }
    let text = String(decoding: buffer[..<n], as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].split(separator: " ")
  }

  /// SIGSTOP takes effect only when the job is next scheduled: until then it
  /// can still read. So this waits, at most `stopWaitMilliseconds`, until the
  /// group's leader shows as stopped (a group whose leader has exited is not
  /// waited for): the caller's flush and first frame come after the stop.
  public func stop() {
    guard kill(-processGroup, SIGSTOP) == 0 else { return }
    for _ in 0..<Self.stopWaitMilliseconds {
      guard let state = Self.statFields(processGroup)?.first, state != "T", state != "t" else { return }
      usleep(1000)
    }
  }

  public static let stopWaitMilliseconds = 100

  public func resume() { _ = kill(-processGroup, SIGCONT) }
}
