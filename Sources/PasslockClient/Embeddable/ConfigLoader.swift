import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Reads the configuration files in their load order: the system file, its
/// drop-ins, then the user's file and drop-ins. Later files win key by key.
public enum ConfigLoader {
  /// `$XDG_CONFIG_HOME/passlock` (default `~/.config/passlock`). No getpwuid
  /// here: passlock is a static executable without NSS, so without HOME or
  /// XDG_CONFIG_HOME there is no user configuration.
  public static func userDirectory() -> String? {
    let home = environment("HOME").flatMap { $0.hasPrefix("/") ? $0 + "/.config" : nil }
    let configHome = environment("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home
    return configHome.map { $0 + "/passlock" }
  }

  public static let defaultSystemDirectory = "/etc/passlock"

  /// /etc/passlock, or PASSLOCK_SYSTEM_CONFIG_DIR (tests; the setuid holder
  /// honours it for root only).
  public static func systemDirectory() -> String {
    environment("PASSLOCK_SYSTEM_CONFIG_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? defaultSystemDirectory
  }

  public static func files() -> [String] {
    files(in: systemDirectory()) + (userDirectory().map { files(in: $0) } ?? [])
  }

  /// One directory's passlock.conf and its drop-ins.
  public static func files(in directory: String) -> [String] {
    [directory + "/passlock.conf"] + dropIns(directory + "/passlock.conf.d")
  }

  /// `*.conf` in `directory`, sorted by name as systemd sorts drop-ins.
  static func dropIns(_ directory: String) -> [String] {
    (Directory.names(directory) ?? []).filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }.sorted().map { directory + "/" + $0 }
  }

  /// Writes a user configuration file atomically (temp file, rename), making its directories.
  public static func write(_ text: String, to path: String) throws(SystemError) {
    try makeDirectories(path, mode: 0o755, parentsOnly: true)
    let temporary = path + ".tmp"
    let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
    defer { fd.close() }
    try fd.writeAll(text)
    try fd.sync(path: temporary)
    guard rename(temporary, path) == 0 else { throw SystemError("rename", path: path) }
  }

  public static func load(_ files: [String] = files()) throws(ConfigError) -> Config {
    var config = Config()
    for file in files {
      let text: String
      do {
        let fd = try FileDescriptor.open(file, O_RDONLY)
        defer { fd.close() }
        text = String(decoding: try fd.readAll(), as: UTF8.self)
      } catch {
        if error.errno == ENOENT { continue }
        throw ConfigError(file: file, line: 0, message: error.description)
      }
      try config.merge(text, file: file)
    }
    return config
  }
}
