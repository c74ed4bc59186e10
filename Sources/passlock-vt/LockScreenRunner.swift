import CLinux
import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Runs the lock screen as the user. posix_spawn (never a bare fork) with
/// POSIX_SPAWN_RESETIDS sets the child's effective uid and gid to the
/// caller's real ones before the exec; the exec of the (not setuid) lock
/// screen then copies them into the saved ids and clears every capability.
/// Supplementary groups are the caller's already: setuid does not change them.
enum LockScreenRunner {
  /// The lock screen binary: `passlock` beside this executable (a root-owned
  /// install directory), never from the environment.
  static func lockScreenPath() -> String { Executable.sibling("passlock") }

  /// Only what the lock screen needs; everything else is dropped.
  static let keptVariables = [
    "LANG", "LC_ALL", "LC_MESSAGES", "NO_COLOR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HOME",
    "PASSLOCK_STATE_DIR", "PASSLOCK_HASH_COST", "PASSLOCK_PAM_CONFIG_DIR", "PASSLOCK_AUTH", "PASSLOCK_SYSTEM_CONFIG_DIR",
  ]

  /// Starts one lock screen on `tty` as the caller, with a reduced
  /// environment and no descriptors but /dev/null and the ready pipe
  /// (`readyPipe`, fd 3 in the child).
  static func start(tty: String, readyPipe: Int32, graceMilliseconds: Int32? = nil) throws(HolderError) -> pid_t {
    let null = passlock_open("/dev/null", O_RDWR | O_CLOEXEC, 0)
    defer { close(null) }
    let grace = graceMilliseconds.map { ["--grace-ms", String($0)] } ?? []
    do {
      return try ChildProcess.launch(
        lockScreenPath(), arguments: ["passlock", "lock", "--tty", tty, "--own-vt", "--ready-fd", "3"] + grace,
        descriptors: [(parent: null, child: 1), (parent: null, child: 2), (parent: readyPipe, child: 3)],
        environment: environment(), resetIDs: true)
    } catch {
      throw .system(SystemError("posix_spawn", errno: error.errno))
    }
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
}
