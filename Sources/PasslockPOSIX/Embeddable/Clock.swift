import Glibc

/// Wall-clock seconds since the epoch; delays are stored as such so that a
/// reboot or a suspend does not shorten them.
public func wallClockSeconds() -> Int64 {
  var ts = timespec()
  clock_gettime(CLOCK_REALTIME, &ts)
  return Int64(ts.tv_sec)
}

/// Wall-clock microseconds (logind's IdleSinceHint is in these).
public func wallClockMicroseconds() -> Int64 {
  var ts = timespec()
  clock_gettime(CLOCK_REALTIME, &ts)
  return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// Monotonic seconds, for deadlines.
public func monotonicSeconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }

/// Monotonic nanoseconds, for measuring durations.
public func monotonicNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Nanoseconds the machine has spent suspended since boot (CLOCK_BOOTTIME
/// counts them, CLOCK_MONOTONIC does not): it grows only by a suspend.
/// Signed, and compared only with a margin: the two readings are not
/// taken at the same instant, so two values may differ by a little either way.
public func suspendedNanoseconds() -> Int64 {
  let monotonic = Int64(monotonicNanoseconds())
  var ts = timespec()
  clock_gettime(CLOCK_BOOTTIME, &ts)
  return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec) - monotonic
}

/// The environment variable, or nil. Callers running privileged must not ask.
public func environment(_ name: String) -> String? {
  getenv(name).map { String(cString: $0) }
}

/// Local wall-clock time as the lock screen's status line shows it ("09:41").
public func wallClockText() -> String {
  var now = time(nil)
  var parts = tm()
  localtime_r(&now, &parts)
  let h = Int(parts.tm_hour)
  let m = Int(parts.tm_min)
  return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
}

/// "user@host", as the lock screen's status line names whose screen it is.
/// Without control characters: the name may come from the (user-written)
/// status cache, and the line goes to a terminal as it is.
public func userAtHost(_ user: String) -> String {
  var host = [CChar](repeating: 0, count: 256)
  gethostname(&host, host.count - 1)
  let bytes = Array(user.utf8) + [UInt8(ascii: "@")] + host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
  // C0 and DEL are single bytes; C1 (U+0080–U+009F) is C2 80–C2 9F in UTF-8.
  var printable: [UInt8] = []
  var index = 0
  while index < bytes.count {
    let byte = bytes[index]
    if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
      index += 2
      continue
    }
    if byte >= 0x20 && byte != 0x7F { printable.append(byte) }
    index += 1
  }
  return String(decoding: printable, as: UTF8.self)
}
