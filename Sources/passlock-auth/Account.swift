import Glibc

/// A user account from the password database (getpwuid_r(3)).
struct Account: Sendable, Equatable {
  var name: String
  var uid: uid_t
  var gid: gid_t
  var home: String

  static func lookup(uid: uid_t) -> Account? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    let rc = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
    guard rc == 0, result != nil else { return nil }
    return Account(
      name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid,
      home: String(cString: entry.pw_dir))
  }

  /// The user this process acts for: its *real* uid, never the environment.
  static func real() -> Account? { lookup(uid: getuid()) }
}
