import Glibc

/// Opening, checking and atomically replacing the store's files: refuse
/// symlinks, foreign owners and group/other permissions, with the fix in the
/// message; write through temp file, fsync, rename, fsync of the directory.
public struct SecureDirectory: ~Copyable {
  public let path: String
  public let owner: uid_t
  let fd: FileDescriptor

  /// Opens `path` as a directory owned by `owner` with no group/other access,
  /// creating it and its missing parents (0755) first when `create` is set.
  public init(path: String, owner: uid_t, create: Bool) throws(StoreFileError) {
    // Every field is assigned after the last throw: Swift 6.0's compiler
    // (Debian 13's swiftlang 6.0.3) crashes on a noncopyable type with a
    // deinit whose throwing init assigns some before it throws.
    if create {
      do { try makeDirectories(path, mode: 0o755, parentsOnly: true) } catch { throw .system(error) }
      if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .system(SystemError("mkdir", path: path)) }
    }
    let opened: FileDescriptor
    do {
      opened = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    } catch {
      if error.errno == ELOOP || error.errno == ENOTDIR { throw .symlink(path) }
      if error.errno == ENOENT { throw .missing(path) }
      throw .system(error)
    }
    do throws(StoreFileError) {
      let status: stat
      do { status = try opened.status() } catch { throw .system(error) }
      try SecureDirectory.check(status, path: path, owner: owner, allowedMode: 0o700)
    } catch {
      opened.close()
      throw error
    }
    self.path = path
    self.owner = owner
    fd = opened
  }

  deinit { fd.close() }

  static func check(_ st: stat, path: String, owner: uid_t, allowedMode: mode_t) throws(StoreFileError) {
    if st.st_uid != owner { throw .wrongOwner(path, found: st.st_uid, expected: owner) }
    let mode = st.st_mode & 0o7777
    if mode & ~allowedMode & 0o077 != 0 { throw .tooOpen(path, mode: mode, wanted: allowedMode) }
  }

  /// Reads the file `name` in this directory; nil when it does not exist.
  public func read(_ name: String) throws(StoreFileError) -> String? {
    let full = path + "/" + name
    let file: FileDescriptor
    do {
      file = try fd.openAt(name, O_RDONLY | O_NOFOLLOW)
    } catch {
      if error.errno == ENOENT { return nil }
      if error.errno == ELOOP { throw .symlink(full) }
      throw .system(SystemError("open", path: full, errno: error.errno))
    }
    defer { file.close() }
    let st: stat
    let contents: [UInt8]
    do { st = try file.status() } catch { throw .system(SystemError("read", path: full, errno: error.errno)) }
    guard st.st_mode & S_IFMT == S_IFREG else { throw .notRegular(full) }
    try SecureDirectory.check(st, path: full, owner: owner, allowedMode: 0o600)
    do { contents = try file.readAll() } catch { throw .system(SystemError("read", path: full, errno: error.errno)) }
    return String(decoding: contents, as: UTF8.self)
  }

  /// Replaces `name` atomically with `contents` (mode 0600): a crash at any
  /// point leaves either the old file or the new one, never a mix.
  public func replace(_ name: String, with contents: String, failBeforeRename: Bool = false) throws(StoreFileError) {
    // Our own name: a pending clear is written without the store's lock, so
    // two writers of one file must not share a temporary.
    let temporary = ".\(name).\(getpid()).tmp"
    let full = path + "/" + temporary
    _ = unlinkat(fd.rawValue, temporary, 0)
    do throws(SystemError) {
      let file = try fd.openAt(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
      defer { file.close() }
      // The owner differs from the euid only when root writes a user's store.
      if geteuid() != owner {
        do { try file.changeOwner(owner, group: gid_t.max) } catch { throw SystemError("fchown", path: full, errno: error.errno) }
      }
      try file.writeAll(contents)
      try file.sync(path: full)
    } catch {
      _ = unlinkat(fd.rawValue, temporary, 0)
      throw .system(error)
    }
    // A test hook: simulates a crash between writing the new file and renaming it.
    if failBeforeRename { throw .system(SystemError("rename", path: full, errno: EINTR)) }
    guard renameat(fd.rawValue, temporary, fd.rawValue, name) == 0 else {
      let error = SystemError("rename", path: path + "/" + name)
      _ = unlinkat(fd.rawValue, temporary, 0)
      throw .system(error)
    }
    do { try fd.sync(path: path) } catch { throw .system(error) }
  }

  /// flock(2) on the directory: serialises the store's read-modify-writes
  /// between processes. Released by `unlock()` or when the process ends.
  /// Waits at most `seconds`: a process holding it may be stopped (its owner
  /// can SIGSTOP their own sudo or gatekeeper mid-write), and nothing that
  /// needs the store may hang behind it. Then `.busy`.
  public func lock(within seconds: Double = SecureDirectory.lockDeadlineSeconds) throws(StoreFileError) {
    let deadline = monotonicSeconds() + seconds
    while retryingInterrupts({ flock(fd.rawValue, LOCK_EX | LOCK_NB) }) != 0 {
      guard errno == EWOULDBLOCK else { throw .system(SystemError("flock", path: path)) }
      guard monotonicSeconds() < deadline else { throw .busy(path) }
      usleep(5000)  // the holder's work is one file write: ms, not more
    }
  }

  /// How long the store's lock is waited for.
  public static let lockDeadlineSeconds = 2.0

  public func unlock() { _ = flock(fd.rawValue, LOCK_UN) }

  /// Removes `name`; a missing file is fine.
  public func remove(_ name: String) throws(StoreFileError) {
    guard unlinkat(fd.rawValue, name, 0) == 0 || errno == ENOENT else {
      throw .system(SystemError("unlink", path: path + "/" + name))
    }
    do { try fd.sync(path: path) } catch { throw .system(error) }
  }
}

/// Why a store file or directory was refused, with the fix.
public enum StoreFileError: Error, CustomStringConvertible {
  case symlink(String)
  case missing(String)
  case notRegular(String)
  case wrongOwner(String, found: uid_t, expected: uid_t)
  case tooOpen(String, mode: mode_t, wanted: mode_t)
  case malformed(String, reason: String)
  /// Another process has held the store's lock past the deadline.
  case busy(String)
  case system(SystemError)

  public var description: String {
    switch self {
    case .symlink(let path):
      return "\(path) is a symbolic link; passlock refuses to follow it. Remove the link ('rm \(path)') and set the passcode again."
    case .missing(let path):
      return "\(path) does not exist"
    case .notRegular(let path):
      return "\(path) is not a regular file; remove it and set the passcode again"
    case .wrongOwner(let path, let found, let expected):
      return "\(path) is owned by uid \(found), not uid \(expected); run 'chown \(expected) \(path)' or remove it"
    case .tooOpen(let path, let mode, let wanted):
      return "\(path) is readable or writable by others (mode \(octal(mode))); run 'chmod \(octal(wanted)) \(path)'"
    case .malformed(let path, let reason):
      return "\(path) is corrupt (\(reason)); it was left untouched. Remove it and set the passcode again, or restore it from a backup"
    case .busy(let path):
      return "the passcode store \(path) is busy: another process has held it for over \(Int(SecureDirectory.lockDeadlineSeconds)) s "
        + "(a stopped sudo or passlock-auth of yours?); try again"
    case .system(let error):
      return error.description
    }
  }
}

func octal(_ mode: mode_t) -> String {
  let digits = String(mode, radix: 8)
  return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
