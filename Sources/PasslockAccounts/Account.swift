import Glibc

/// A user account from the password database (getpwuid_r(3), getpwnam_r(3)): the one place
/// that reads it. A module of its own so that the fully static lock screen,
/// which never looks a user up (NSS needs the dynamic loader), does not carry
/// glibc's NSS code.
public struct Account: Sendable, Equatable {
  public var name: String
  public var uid: uid_t
  public var gid: gid_t
  public var home: String

  public static func lookup(uid: uid_t) -> Account? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    let rc = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
    guard rc == 0, result != nil else { return nil }
    return Account(
      name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid,
      home: String(cString: entry.pw_dir))
  }

  public static func lookup(name: String) -> Account? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    let rc = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
    guard rc == 0, result != nil else { return nil }
    return Account(
      name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid,
      home: String(cString: entry.pw_dir))
  }

  /// The user this process acts for: its *real* uid, never the environment.
  public static func real() -> Account? { lookup(uid: getuid()) }
}
