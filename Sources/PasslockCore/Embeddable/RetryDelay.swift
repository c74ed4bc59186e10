/// How long to wait before trying again something that failed for a moment
/// (logind's Inhibit right after resume, a gatekeeper killed or refused a
/// process): 100 ms after the first failure, doubling, at most 5 s.
public enum RetryDelay {
  public static func milliseconds(afterFailures failures: Int) -> Int64 { min(5000, 50 << min(max(failures, 1), 7)) }
}
