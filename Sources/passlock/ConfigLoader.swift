import Glibc
import PasslockCore
import PasslockPOSIX

/// Reads the configuration files in their load order: the system file, its
/// drop-ins, then the user's file and drop-ins. Later files win key by key.
enum ConfigLoader {
  static func files() -> [String] {
    let system = environment("PASSLOCK_SYSTEM_CONFIG_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/passlock"
    // No getpwuid here: passlock is a static executable without NSS. Without
    // HOME or XDG_CONFIG_HOME there is no user configuration to read.
    let home = environment("HOME").flatMap { $0.hasPrefix("/") ? $0 + "/.config" : nil }
    let configHome = environment("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home
    var files: [String] = []
    for directory in [system] + (configHome.map { [$0 + "/passlock"] } ?? []) {
      files.append(directory + "/passlock.conf")
      files += dropIns(directory + "/passlock.conf.d")
    }
    return files
  }

  /// `*.conf` in `directory`, sorted by name as systemd sorts drop-ins.
  static func dropIns(_ directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name.hasSuffix(".conf") && !name.hasPrefix(".") { names.append(name) }
    }
    return names.sorted().map { directory + "/" + $0 }
  }

  static func load() throws(ConfigError) -> Config {
    var config = Config()
    for file in files() {
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
