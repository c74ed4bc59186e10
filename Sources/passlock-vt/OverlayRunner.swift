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
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    return try launch(
      ["passlock", "lock", "--tty", tty, "--own-vt", "--ready-fd", "3"], stdout: null, stderr: null, ready: readyPipe)
  }

  /// What the lock screen, and the holder's own gatekeeper request, run
  /// with: the same variables, so both see the same store. The PASSLOCK_*
  /// test knobs choose the gatekeeper and the store: only root's own (test)
  /// runs pass them on. A user's lock screen finds the gatekeeper beside itself.
  static func environment() -> [String] {
    var environment = ["PATH=/usr/bin:/bin", "TERM=linux"]
    let kept = getuid() == 0 ? keptVariables : keptVariables.filter { !$0.hasPrefix("PASSLOCK_") }
    for name in kept { if let value = getenv(name) { environment.append(name + "=" + String(cString: value)) } }
    return environment
  }

  /// The lock screen binary run as the caller with a reduced environment and
  /// no descriptors but /dev/null, `stdout`, `stderr` and the ready pipe.
  static func launch(_ arguments: [String], stdout: Int32, stderr: Int32, ready: Int32? = nil) throws(HolderError) -> pid_t {
    var descriptors = [(parent: stdout, child: Int32(1)), (parent: stderr, child: Int32(2))]
    if let ready { descriptors.append((parent: ready, child: 3)) }
    do {
      return try ChildProcess.launch(
        overlayPath(), arguments: arguments, descriptors: descriptors, environment: environment(), resetIDs: true)
    } catch {
      throw .system(SystemError("posix_spawn", errno: error.errno))
    }
  }
}
