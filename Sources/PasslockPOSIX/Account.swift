import Glibc

/// A user account from the password database (getpwuid_r(3)).
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

  /// The user this process acts for: its *real* uid, never the environment.
  public static func real() -> Account? { lookup(uid: getuid()) }
}

/// Wall-clock seconds since the epoch; delays are stored as such so that a
/// reboot or a suspend does not shorten them.
public func wallClockSeconds() -> Int64 {
  var ts = timespec()
  clock_gettime(CLOCK_REALTIME, &ts)
  return Int64(ts.tv_sec)
}

/// Monotonic nanoseconds, for measuring durations.
public func monotonicNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The environment variable, or nil. Callers running privileged must not ask.
public func environment(_ name: String) -> String? {
  getenv(name).map { String(cString: $0) }
}
