import Glibc

/// Listing a directory (opendir(3), readdir(3)): the one place that turns a
/// dirent's name into a String.
public enum Directory {
  /// The entries of `path`, without "." and ".."; nil when it cannot be opened.
  public static func names(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// The target of symbolic link `path` (readlink(2)), or nil.
  public static func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink(path, &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
  }
}

/// Small files read or written whole: /proc and /sys knobs, state records.
public enum SmallFile {
  /// Up to `limit` bytes of `path` (not following a final symlink); nil if
  /// it cannot be read or is empty.
  public static func read(_ path: String, limit: Int = 256) -> String? {
    guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
    defer { fd.close() }
    var buffer = [UInt8](repeating: 0, count: limit)
    let n = buffer.withUnsafeMutableBytes { bytes in (try? fd.read(into: bytes)) ?? 0 }
    guard n > 0 else { return nil }
    return String(decoding: buffer[..<n], as: UTF8.self)
  }

  /// Writes `value` to an existing file (a kernel knob); false on failure.
  @discardableResult
  public static func write(_ path: String, _ value: String) -> Bool {
    guard let fd = try? FileDescriptor.open(path, O_WRONLY) else { return false }
    defer { fd.close() }
    return (try? fd.writeAll(value)) != nil
  }
}
