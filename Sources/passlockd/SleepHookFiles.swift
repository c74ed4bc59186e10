import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// What passlock's wait before sleep (SleepHook, run as root by
/// passlock-sleep.service and by systemd-sleep as its hook) looks for in the runtime
/// directory: `sleep-ready` (this daemon's sessions are locked for the sleep
/// at hand). The hook waits for it, so the lock comes before sleep even
/// where logind refuses the delay inhibitor (no polkit). It finds the
/// daemon itself in /proc: nothing here names it.
struct SleepHookFiles {
  let directory: String

  /// Where packages and scripts/install put the hook (systemd-sleep reads it there only).
  static let hook = "/usr/lib/systemd/system-sleep/passlock"
  static var hookInstalled: Bool { access(hook, X_OK) == 0 }
  /// The same wait as a unit before sleep.target (systemd 256 on freezes
  /// the users' processes before it runs the hook): enabled, as the package
  /// and scripts/install enable it (a link in sleep.target.wants).
  static let unit = "passlock-sleep.service"
  static var unitEnabled: Bool {
    var st = stat()
    return ["/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"].contains { dir in
      lstat("\(dir)/sleep.target.wants/\(unit)", &st) == 0
    }
  }
  /// What keeps the lock before sleep without the inhibitor, as installed.
  static var keptBy: String { unitEnabled ? "\(unit) and the system sleep hook \(hook)" : "the system sleep hook \(hook)" }

  static func inRuntimeDirectory() -> SleepHookFiles? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    mkdir(runtime + "/passlock", 0o700)
    return SleepHookFiles(directory: runtime + "/passlock")
  }

  /// At start: no sleep is prepared for yet (and no file of an older
  /// passlock's is left: the hook once read `daemon.pid`).
  func announce() {
    unlink(directory + "/daemon.pid")
    clearReady()
  }

  func markReady() { write("sleep-ready", "\(getpid())\n") }

  func clearReady() { unlink(directory + "/sleep-ready") }

  private func write(_ name: String, _ text: String) {
    guard let fd = try? FileDescriptor.open(directory + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644)
    else { return }
    try? fd.writeAll(text)
    fd.close()
  }
}
