import Glibc
import PasslockPOSIX

/// Runs the lock screen as the user: passlock-vt spawns itself in
/// `--exec-overlay` mode (posix_spawn, never a bare fork), which drops to the
/// caller's real uid, gid and groups for good and execs `passlock lock`.
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
    var environment = ["PATH=/usr/bin:/bin", "TERM=linux"]
    for name in keptVariables { if let value = getenv(name) { environment.append(name + "=" + String(cString: value)) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
    posix_spawn_file_actions_adddup2(&actions, readyPipe, 3)
    let words: [String] = ["passlock-vt", "--exec-overlay", overlayPath(), tty]
    let argv = words.map(cString) + [nil]
    let envp = environment.map(cString) + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, ownPath(), &actions, nil, argv, envp)
    guard rc == 0 else { throw .system("posix_spawn", rc) }
    return pid
  }

  /// The `--exec-overlay` side: drop to the real user, then exec.
  static func execAsUser(overlay: String, tty: String) -> Never {
    let uid = getuid()
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { exit(126) }
    let gid = entry.pw_gid
    if uid != 0 || geteuid() != 0 {
      // Supplementary groups first, while still root; then gid, then uid.
      guard initgroups(entry.pw_name, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else { exit(126) }
      // There must be no way back to root.
      guard getuid() == uid, geteuid() == uid, getgid() == gid, getegid() == gid, setuid(0) != 0 else { exit(126) }
    }
    var environment: [String] = []
    var p = environ
    while let entry = p.pointee {
      environment.append(String(cString: entry))
      p += 1
    }
    environment.append("USER=" + String(cString: entry.pw_name))
    if getenv("HOME") == nil { environment.append("HOME=" + String(cString: entry.pw_dir)) }
    let words: [String] = ["passlock", "lock", "--tty", tty, "--ready-fd", "3"]
    let argv = words.map(cString) + [nil]
    let envp = environment.map(cString) + [nil]
    execve(overlay, argv, envp)
    exit(127)
  }
}

/// A malloc'd C copy of `text` (for argv and envp).
func cString(_ text: String) -> UnsafeMutablePointer<CChar>? { text.withCString { strdup($0) } }
