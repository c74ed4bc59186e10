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
