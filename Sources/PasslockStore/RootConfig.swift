import Glibc
import PasslockCore
import PasslockPOSIX

/// The configuration root-run code may read (the setuid gatekeeper, and
/// pam_passlock in a root PAM host): one file, owned by root and reachable
/// only through root-owned directories nobody else can write.
///
/// It lives in the `etc` beside an installed binary's prefix (`/usr/bin` →
/// `/etc`, `/usr/local/bin` → `/usr/local/etc`, `/opt/x/bin` → `/opt/x/etc`),
/// the autotools convention, so a staged install carries its own
/// configuration. The PAM module finds it beside its `helper=` gatekeeper.
public enum RootConfig {
  public static func path(besides executable: String?) -> String {
    var prefix = parent(parent(executable ?? "/usr/bin/x"))
    if prefix == "/usr" || prefix == "/" { prefix = "" }
    return prefix + "/etc/passlock/passlock.conf"
  }

  static func parent(_ path: String) -> String { Executable.directory(of: path) }

  /// The defaults when `file` does not exist. `checkingOwner` false: read as
  /// it is (a gatekeeper that is no boundary, for the user's own store).
  public static func load(_ file: String, checkingOwner: Bool = true) throws(RootConfigError) -> Config {
    var config = Config()
    var st = stat()
    guard lstat(file, &st) == 0 else {
      if errno == ENOENT { return config }
      throw RootConfigError(SystemError("stat", path: file).description)
    }
    if checkingOwner {
      try checkRootOwned(file, st, isDirectory: false)
      var directory = parent(file)
      while true {
        guard lstat(directory, &st) == 0 else { throw RootConfigError(SystemError("stat", path: directory).description) }
        try checkRootOwned(directory, st, isDirectory: true)
        if directory == "/" { break }
        directory = parent(directory)
      }
    }
    do {
      let fd = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW)
      defer { fd.close() }
      try config.merge(String(decoding: try fd.readAll(), as: UTF8.self), file: file)
    } catch let error as ConfigError {
      throw RootConfigError(error.description)
    } catch {
      throw RootConfigError("\(error)")
    }
    return config
  }

  static func checkRootOwned(_ path: String, _ st: stat, isDirectory: Bool) throws(RootConfigError) {
    let type = st.st_mode & S_IFMT
    guard type == (isDirectory ? S_IFDIR : S_IFREG) else {
      throw RootConfigError("refusing \(path): not a \(isDirectory ? "directory" : "regular file")")
    }
    // A sticky world-writable directory (/tmp) is safe for root-owned entries.
    let writableByOthers = st.st_mode & 0o022 != 0 && !(isDirectory && st.st_mode & S_ISVTX != 0)
    guard st.st_uid == 0, !writableByOthers else {
      throw RootConfigError(
        "refusing \(path): it must be owned by root and writable only by root ('chown root \(path); chmod go-w \(path)')")
    }
  }
}

public struct RootConfigError: Error, CustomStringConvertible {
  public var description: String
  init(_ description: String) { self.description = description }
}
