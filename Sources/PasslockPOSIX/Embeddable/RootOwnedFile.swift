import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
#endif

/// Small files that only root can have written: logind's state files and
/// passlock-vt's record. Anything else (missing, a link, a file someone else
/// owns or may write) is not believed.
public enum RootOwnedFile {
  /// The file's `KEY=value` lines, or nil when it is not such a file.
  public static func keyValues(_ path: String) -> [String: String]? {
    guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
    defer { fd.close() }
    guard let st = try? fd.status(), st.st_uid == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o022 == 0,
      let bytes = try? fd.readAll(limit: 1 << 16)
    else { return nil }
    return KeyValueText.parse(String(decoding: bytes, as: UTF8.self))
  }
}
