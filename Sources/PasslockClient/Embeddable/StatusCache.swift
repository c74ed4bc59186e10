import CLinux
import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// The lock screen's last status from the gatekeeper, kept in the user's
/// runtime directory, so that the next lock screen draws its first frame at
/// once instead of after the gatekeeper's round trip (a setuid start-up and
/// a store read: most of the time to the first frame). Display only: the
/// gatekeeper's own answer follows within milliseconds and replaces it
/// before a single key is read, and every check is the gatekeeper's as
/// before. The user can write this file, so it decides nothing. (The
/// console holder paints its first frame from it too, read as the user:
/// display only there as well.)
public enum StatusCache {
  /// $XDG_RUNTIME_DIR/passlock, when it is a real directory of `owner`'s
  /// that only they can write (it is created when missing). Anything else (a
  /// symlink, someone else's directory: root running with a user's
  /// environment) means no cache.
  static func directory(owner: uid_t = geteuid(), creating: Bool = false) -> String? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"), isPrivateDirectory(runtime, owner: owner)
    else { return nil }
    let directory = runtime + "/passlock"
    if creating { mkdir(directory, 0o700) }
    return isPrivateDirectory(directory, owner: owner) ? directory : nil
  }

  static func isPrivateDirectory(_ path: String, owner: uid_t) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR && st.st_uid == owner && st.st_mode & 0o022 == 0
  }

  static let name = "lock-screen.status"

  /// The last status, if it is one a first frame may show: a passcode set
  /// and no lockout (a locked-out screen starts a PAM transaction, which
  /// waits for the real answer). A retry delay counts down from when it was
  /// saved. A file that does not parse, or holds values no gatekeeper would
  /// give, is removed (`tidying`: the holder only reads).
  public static func read(owner: uid_t = geteuid(), tidying: Bool = true) -> StoreStatus? {
    guard let directory = directory(owner: owner) else { return nil }
    let path = directory + "/" + name
    // O_NONBLOCK: a FIFO put there must not hold up a lock (fstat refuses it next).
    let fd = passlock_open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == owner, st.st_size < 4096 else {
      if tidying { unlink(path) }
      return nil
    }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let n = Glibc.read(fd, &bytes, bytes.count)
    let now = wallClockSeconds()
    guard n > 0, let saved = AuthResult.decode(Array(bytes[..<n])), var status = StoreStatus(saved),
      let savedAt = saved.fields["saved_at"].flatMap({ Int64($0) }), savedAt > 0, savedAt <= now,
      PasscodePolicy.lengths.contains(status.length), (0...1000).contains(status.failedAttempts),
      (0...(366 * 86400)).contains(status.retryAfterSeconds)
    else {
      if tidying { unlink(path) }
      return nil
    }
    guard status.passcodeSet, !status.accountPasswordRequired else { return nil }
    status.retryAfterSeconds = max(0, status.retryAfterSeconds - (now - savedAt))
    return status
  }

  /// Saves the gatekeeper's answer for the next lock screen (atomically: a
  /// lock screen starting meanwhile reads the old one or the new one).
  public static func write(_ status: StoreStatus) {
    guard let directory = directory(creating: true) else { return }
    var fields = status.fields
    fields["saved_at"] = String(wallClockSeconds())
    let path = directory + "/" + name
    let temporary = path + ".\(getpid())"
    let fd = passlock_open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    let written = (try? FileDescriptor(rawValue: fd).writeAll(AuthResult(.ok, fields).encoded())) != nil
    close(fd)
    if !written || rename(temporary, path) != 0 { unlink(temporary) }
  }

  /// After set, change or remove: the next first frame waits for the gatekeeper.
  public static func remove() {
    if let directory = directory() { unlink(directory + "/" + name) }
  }
}
