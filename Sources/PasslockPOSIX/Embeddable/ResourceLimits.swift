import Glibc

/// Resource limits a caller sets before starting a program. A setuid program
/// inherits them from whoever runs it, so it lifts the ones that could cut
/// its work short at a chosen moment.
public enum ResourceLimits {
  /// RLIMIT_FSIZE to unlimited (soft and hard; a setuid-root program may
  /// raise both). A caller's small limit, with SIGXFSZ ignored, would
  /// otherwise truncate a root-owned record mid-write: the store's counter,
  /// passlock-vt's state record.
  public static func liftFileSizeLimit() {
    var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)  // RLIM_INFINITY
    _ = setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &unlimited)
  }

  /// Runs `body` with RLIMIT_FSIZE unlimited, then puts the caller's back
  /// (for a program whose children must keep the limit it was given).
  public static func withoutFileSizeLimit<T>(_ body: () -> T) -> T {
    var saved = rlimit()
    let got = getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved) == 0
    liftFileSizeLimit()
    defer { if got { _ = setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved) } }
    return body()
  }

  /// The soft RLIMIT_NOFILE raised to the hard limit: descriptors a peer
  /// passes us (D-Bus messages) must not run a daemon out of them.
  public static func raiseOpenFileLimit() {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
  }
}
