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
  /// "Password first, passcode after" (the root-held configuration's).
  var passwordFirst = PasswordFirstPolicy.off
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
    // Not a boundary here (the store is the user's own): the policy comes
    // from the system file as it is, so that it can be tried without root.
    let systemFile = (environment("PASSLOCK_SYSTEM_CONFIG_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/passlock") + "/passlock.conf"
    let config: Config
    do throws(RootConfigError) { config = try RootConfig.load(systemFile, checkingOwner: false) } catch {
      throw .setup(error.description)
    }
    return Mode(
      user: user, location: StoreLocation(kind: .user, directory: directory, owner: getuid()),
      hashCost: environment("PASSLOCK_HASH_COST").flatMap { Int($0) }
        .flatMap { PasscodeHasher.costs.contains($0) ? $0 : nil },
      pamConfigDirectory: environment("PASSLOCK_PAM_CONFIG_DIR").flatMap { $0.isEmpty ? nil : $0 },
      passwordFirst: PasswordFirstPolicy(config))
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
    let config: Config
    do throws(RootConfigError) { config = try RootConfig.load(RootConfig.path(besides: Executable.path)) } catch {
      throw .setup(error.description)
    }
    let base = config["Store.SystemDirectory"]
    let pamDirectory = config["Authentication.PAMConfigDirectory"]
    return Mode(
      user: user, location: StoreLocation(kind: .system, directory: base + "/" + user.name, owner: 0),
      hashCost: nil, pamConfigDirectory: pamDirectory.isEmpty ? nil : pamDirectory, passwordFirst: PasswordFirstPolicy(config))
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
