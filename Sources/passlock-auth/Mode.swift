import Glibc
import PasslockAccounts
import PasslockCore
import PasslockPOSIX
import PasslockStore

/// How this gatekeeper runs: installed setuid root (the system store, nothing
/// from the caller trusted) or as a plain program (the user's own store).
struct Mode {
  var user: Account
  var location: StoreLocation
  /// yescrypt cost override for tests; nil calibrates. Never set when privileged.
  var hashCost: Int?
  /// pam_start_confdir directory; nil uses /etc/pam.d.
  var pamConfigDirectory: String?
  /// Setting a passcode asks for the account password only where that protects something.
  var setNeedsAccountPassword: Bool { location.kind == .system }

  static func detect() throws(GatekeeperError) -> Mode {
    guard let user = Account.real() else { throw .setup("no password database entry for uid \(getuid())") }
    if isPrivileged() { return try privileged(user) }
    if isNeutered() {
      // Falling back to the user store here would make every passcode look
      // unset (the daemon would never lock) or let a user store replace the
      // root-held one. Refuse, and say what took the privileges away.
      throw .setup(
        "passlock-auth is installed setuid root but runs without its privileges (NoNewPrivileges, a nosuid mount, "
          + "or a systemd unit with seccomp options such as SystemCallFilter=, LockPersonality=, RestrictRealtime=); "
          + "the passcode store in /var/lib/passlock cannot be reached. Remove those options from the unit that started it")
    }
    let home = environment("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? user.home
    let stateHome = environment("XDG_STATE_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
    let directory = environment("PASSLOCK_STATE_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? stateHome + "/passlock"
    return Mode(
      user: user, location: StoreLocation(kind: .user, directory: directory, owner: getuid()),
      hashCost: environment("PASSLOCK_HASH_COST").flatMap { Int($0) }
        .flatMap { PasscodeHasher.costs.contains($0) ? $0 : nil },
      pamConfigDirectory: environment("PASSLOCK_PAM_CONFIG_DIR").flatMap { $0.isEmpty ? nil : $0 })
  }

  /// True when running with root's power over the store: setuid, or an
  /// installed setuid-root binary run by root itself.
  static func isPrivileged() -> Bool {
    if getuid() != geteuid() { return true }
    return geteuid() == 0 && isInstalledSetuidRoot()
  }

  /// This binary's file is root's and carries the setuid bit.
  static func isInstalledSetuidRoot() -> Bool {
    var st = stat()
    return stat("/proc/self/exe", &st) == 0 && st.st_uid == 0 && st.st_mode & S_ISUID != 0
  }

  /// True when this binary is installed setuid root but the kernel did not
  /// honour the bit (no_new_privs, nosuid): an installed gatekeeper that
  /// cannot reach the system store.
  static func isNeutered() -> Bool {
    getuid() != 0 && geteuid() == getuid() && isInstalledSetuidRoot()
  }

  /// The installed mode: the environment is discarded, the store and PAM
  /// directory come only from the root-owned configuration file.
  static func privileged(_ user: Account) throws(GatekeeperError) -> Mode {
    clearenv()
    setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1)
    umask(0o077)
    let config = try RootConfig.load()
    let base = config["Store.SystemDirectory"]
    let pamDirectory = config["Authentication.PAMConfigDirectory"]
    return Mode(
      user: user, location: StoreLocation(kind: .system, directory: base + "/" + user.name, owner: 0),
      hashCost: nil, pamConfigDirectory: pamDirectory.isEmpty ? nil : pamDirectory)
  }
}

/// The configuration a privileged gatekeeper may read: one file, owned by root
/// and reachable only through root-owned directories nobody else can write.
///
/// It lives in the `etc` beside the binary's prefix (`/usr/bin` → `/etc`,
/// `/usr/local/bin` → `/usr/local/etc`, `/opt/x/bin` → `/opt/x/etc`), the
/// autotools convention, so a staged install carries its own configuration.
enum RootConfig {
  static func path() -> String {
    var prefix = parent(parent(Executable.path ?? "/usr/bin/x"))
    if prefix == "/usr" || prefix == "/" { prefix = "" }
    return prefix + "/etc/passlock/passlock.conf"
  }

  static func parent(_ path: String) -> String { Executable.directory(of: path) }

  static func load() throws(GatekeeperError) -> Config {
    var config = Config()
    let file = path()
    var st = stat()
    guard lstat(file, &st) == 0 else {
      if errno == ENOENT { return config }
      throw .setup(SystemError("stat", path: file).description)
    }
    try checkRootOwned(file, st, isDirectory: false)
    var directory = parent(file)
    while true {
      guard lstat(directory, &st) == 0 else { throw .setup(SystemError("stat", path: directory).description) }
      try checkRootOwned(directory, st, isDirectory: true)
      if directory == "/" { break }
      directory = parent(directory)
    }
    do {
      let fd = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW)
      defer { fd.close() }
      try config.merge(String(decoding: try fd.readAll(), as: UTF8.self), file: file)
    } catch let error as ConfigError {
      throw .setup(error.description)
    } catch {
      throw .setup("\(error)")
    }
    return config
  }

  static func checkRootOwned(_ path: String, _ st: stat, isDirectory: Bool) throws(GatekeeperError) {
    let type = st.st_mode & S_IFMT
    guard type == (isDirectory ? S_IFDIR : S_IFREG) else {
      throw .setup("refusing \(path): not a \(isDirectory ? "directory" : "regular file")")
    }
    // A sticky world-writable directory (/tmp) is safe for root-owned entries.
    let writableByOthers = st.st_mode & 0o022 != 0 && !(isDirectory && st.st_mode & S_ISVTX != 0)
    guard st.st_uid == 0, !writableByOthers else {
      throw .setup("refusing \(path): it must be owned by root and writable only by root ('chown root \(path); chmod go-w \(path)')")
    }
  }
}

enum GatekeeperError: Error, CustomStringConvertible {
  case setup(String)
  var description: String {
    switch self {
    case .setup(let text): return text
    }
  }
}
