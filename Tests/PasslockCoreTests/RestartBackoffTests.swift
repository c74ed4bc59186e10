import PasslockCore
import Testing

/// The restart delays of a lock screen that keeps dying, and when the
/// holder says so.
@Suite struct RestartBackoffTests {
  /// How long each lock screen ran before it died → the wait before the next.
  @Test(
    arguments: [
      ([0.1], [0]),
      ([0.1, 0.1, 0.1], [0, 0, 0]),
      ([0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0, 0, 0, 100, 200, 400]),
      (Array(repeating: 0.1, count: 12), [0, 0, 0, 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]),
      // A run of 10 s or more starts the count again.
      ([0.1, 0.1, 0.1, 0.1, 30, 0.1, 0.1, 0.1], [0, 0, 0, 100, 0, 0, 0, 100]),
      ([9.9, 9.9, 9.9, 9.9], [0, 0, 0, 100]),
      ([10, 10, 10, 10, 10], [0, 0, 0, 0, 0]),
    ] as [([Double], [Int])])
  func waitsGrowWhileItKeepsDyingQuickly(_ runs: [Double], _ delays: [Int]) {
    var backoff = RestartBackoff()
    #expect(runs.map { backoff.failed(afterRunning: $0) } == delays)
  }

  @Test(arguments: [(4, false), (5, true), (9, true)])
  func theHolderSaysSoAfterFiveQuickFailures(_ failures: Int, _ reported: Bool) {
    var backoff = RestartBackoff()
    for _ in 0..<failures { _ = backoff.failed(afterRunning: 1) }
    #expect(backoff.keepsFailing == reported)
  }
}
