import Glibc
import PasslockPOSIX

/// What passlock's system sleep hook (systemd/system-sleep/passlock, run as
/// root by systemd-sleep before the machine sleeps) reads in the runtime
/// directory: `daemon.pid` (that a passlockd runs) and `sleep-ready` (its
/// sessions are locked for the sleep at hand). The hook waits for the latter,
/// so the lock comes before sleep even where logind refuses the delay
/// inhibitor (no polkit).
struct SleepHookFiles {
  let directory: String

  /// Where packages and scripts/install put the hook (systemd-sleep reads it there only).
  static let hook = "/usr/lib/systemd/system-sleep/passlock"
  static var hookInstalled: Bool { access(hook, X_OK) == 0 }

  static func inRuntimeDirectory() -> SleepHookFiles? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    mkdir(runtime + "/passlock", 0o700)
    return SleepHookFiles(directory: runtime + "/passlock")
  }

  /// At start: this daemon runs, and no sleep is prepared for yet.
  func announce() {
    write("daemon.pid", "\(getpid())\n")
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
