/// When to start a lock screen again after it ended without an unlock (a
/// crash, a kill): at once for the first few, then after 100 ms, doubling up
/// to 5 s while it keeps dying quickly. A run that lasted `quickSeconds` or
/// more starts the count again. passlockd and the console holder both follow it.
public struct RestartBackoff: Hashable, Sendable {
  /// A lock screen that ended sooner than this after it started failed quickly.
  public static let quickSeconds: Double = 10
  /// Quick failures in a row restarted at once.
  public static let immediateRestarts = 3
  public static let firstDelayMilliseconds = 100
  public static let maximumDelayMilliseconds = 5000
  /// Quick failures in a row after which the console holder says so on the lock VT.
  public static let reportAfter = 5

  public private(set) var quickFailures = 0

  public init() {}

  /// Counts a failure of a lock screen that ran `seconds`; the wait before
  /// the next start, in milliseconds.
  public mutating func failed(afterRunning seconds: Double) -> Int {
    quickFailures = seconds < Self.quickSeconds ? quickFailures + 1 : 1
    return delayMilliseconds
  }

  public var delayMilliseconds: Int {
    guard quickFailures > Self.immediateRestarts else { return 0 }
    let doublings = min(quickFailures - Self.immediateRestarts - 1, 6)
    return min(Self.maximumDelayMilliseconds, Self.firstDelayMilliseconds << doublings)
  }

  /// It keeps dying: worth telling the user, not just retrying.
  public var keepsFailing: Bool { quickFailures >= Self.reportAfter }
}
