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
  static func overlayPath() -> String {
    directory(of: ownPath()) + "/passlock"
  }

  static func ownPath() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/usr/bin/passlock-vt"
  }

  static func directory(of path: String) -> String {
    path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
  }

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

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
    posix_spawn_file_actions_adddup2(&actions, readyPipe, 3)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t(), all = sigset_t()
    sigemptyset(&empty)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_RESETIDS | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let words: [String] = ["passlock", "lock", "--tty", tty, "--ready-fd", "3"]
    let argv = words.map(cString) + [nil]
    let envp = environment.map(cString) + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, overlayPath(), &actions, &attributes, argv, envp)
    guard rc == 0 else { throw .system("posix_spawn", rc) }
    return pid
  }
}

/// A malloc'd C copy of `text` (for argv and envp).
func cString(_ text: String) -> UnsafeMutablePointer<CChar>? { text.withCString { strdup($0) } }
