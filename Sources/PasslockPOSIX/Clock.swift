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
  let text = user + "@" + String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  var printable = ""
  printable.unicodeScalars.append(contentsOf: text.unicodeScalars.filter { $0.value >= 0x20 && !(0x7f...0x9f).contains($0.value) })
  return printable
}
