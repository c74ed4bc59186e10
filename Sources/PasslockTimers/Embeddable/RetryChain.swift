#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Retries of something that fails for a moment (logind's Inhibit right
/// after resume: "operation in progress"): after 100 ms, 200 ms, 400 ms…
/// up to 5 s, as one chain however many paths ask meanwhile, so that the
/// log says it once and logind is not asked twice at once.
public final class RetryChain {
  public private(set) var failures = 0
  private var timer: EventLoop.Token?
  let loop: EventLoop

  public init(loop: EventLoop) { self.loop = loop }

  /// A retry is scheduled and has not run yet.
  public var isWaiting: Bool { timer != nil }

  /// The attempt failed: `retry` runs after the next delay, which is
  /// returned. Nothing more is scheduled while one retry waits.
  @discardableResult
  public func failed(_ retry: @escaping () -> Void) -> Int64 {
    guard timer == nil else { return RetryDelay.milliseconds(afterFailures: failures) }  // that retry answers this ask too
    failures += 1
    let delay = RetryDelay.milliseconds(afterFailures: failures)
    timer = loop.after(milliseconds: delay) { [self] in
      timer = nil
      retry()
    }
    return delay
  }

  /// The attempt succeeded (or is no longer wanted): the chain starts again.
  public func reset() {
    loop.cancel(timer)
    timer = nil
    failures = 0
  }
}
