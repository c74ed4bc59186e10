import Glibc
import PasslockCore
import PasslockPOSIX

/// The lock screen's last status from the gatekeeper, kept in the user's
/// runtime directory, so that the next lock screen draws its first frame at
/// once instead of after the gatekeeper's round trip (a setuid start-up and
/// a store read: most of the time to the first frame). Display only: the
/// gatekeeper's own answer follows within milliseconds and replaces it
/// before a single key is read, and every check is the gatekeeper's as
/// before. The user can write this file, so it decides nothing.
enum StatusCache {
  static func path() -> String? {
    environment("XDG_RUNTIME_DIR").flatMap { $0.hasPrefix("/") ? $0 + "/passlock/lock-screen.status" : nil }
  }

  /// The last status, if it is one a first frame may show: a passcode set
  /// and no lockout (a locked-out screen starts a PAM transaction, which
  /// waits for the real answer). A retry delay counts down from when it was saved.
  static func read() -> StoreStatus? {
    guard let path = path() else { return nil }
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == getuid(), st.st_size < 4096 else { return nil }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let n = Glibc.read(fd, &bytes, bytes.count)
    guard n > 0, let saved = AuthResult.decode(Array(bytes[..<n])), var status = StoreStatus(saved),
      let savedAt = saved.fields["saved_at"].flatMap({ Int64($0) }),
      status.passcodeSet, !status.accountPasswordRequired
    else { return nil }
    status.retryAfterSeconds = max(0, status.retryAfterSeconds - max(0, wallClockSeconds() - savedAt))
    return status
  }

  /// Saves the gatekeeper's answer for the next lock screen (atomically: a
  /// lock screen starting meanwhile reads the old one or the new one).
  static func write(_ status: StoreStatus) {
    guard let path = path() else { return }
    let directory = String(path[..<path.lastIndex(of: "/")!])
    mkdir(directory, 0o700)
    var fields = status.fields
    fields["saved_at"] = String(wallClockSeconds())
    let temporary = path + ".\(getpid())"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    let written = (try? FileDescriptor(rawValue: fd).writeAll(AuthResult(.ok, fields).encoded())) != nil
    close(fd)
    if !written || rename(temporary, path) != 0 { unlink(temporary) }
  }

  /// After set, change or remove: the next first frame waits for the gatekeeper.
  static func remove() {
    if let path = path() { unlink(path) }
  }
}
