import Glibc
import PasslockPOSIX

/// Runs the lock screen as the user. posix_spawn (never a bare fork) with
/// POSIX_SPAWN_RESETIDS sets the child's effective uid and gid to the
/// caller's real ones before the exec; the exec of the (not setuid) lock
/// screen then copies them into the saved ids and clears every capability.
/// Supplementary groups are the caller's already: setuid does not change them.
enum OverlayRunner {
  /// The lock screen binary: `passlock` beside this executable (a root-owned
  /// install directory), never from the environment.
  static func overlayPath() -> String { Executable.sibling("passlock") }

  /// Only what the lock screen needs; everything else is dropped.
  static let keptVariables = [
    "LANG", "LC_ALL", "LC_MESSAGES", "NO_COLOR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HOME",
    "PASSLOCK_STATE_DIR", "PASSLOCK_HASH_COST", "PASSLOCK_PAM_CONFIG_DIR", "PASSLOCK_AUTH",
  ]

  /// Starts one lock screen on `tty`; fd 3 in the child is `readyPipe`.
  static func start(tty: String, readyPipe: Int32) throws(HolderError) -> pid_t {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil else {
      throw .refused("no password database entry for uid \(getuid())")
    }
    var environment = ["PATH=/usr/bin:/bin", "TERM=linux", "USER=" + String(cString: entry.pw_name)]
    for name in keptVariables { if let value = getenv(name) { environment.append(name + "=" + String(cString: value)) } }
    if getenv("HOME") == nil { environment.append("HOME=" + String(cString: entry.pw_dir)) }

    // No descriptors but /dev/null and the ready pipe.
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    do {
      return try ChildProcess.launch(
        overlayPath(), arguments: ["passlock", "lock", "--tty", tty, "--ready-fd", "3"],
        descriptors: [(parent: null, child: 1), (parent: null, child: 2), (parent: readyPipe, child: 3)],
        environment: environment, resetIDs: true)
    } catch {
      throw .system("posix_spawn", error.errno)
    }
  }
}
