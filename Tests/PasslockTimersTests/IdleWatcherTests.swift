import PasslockCore
import PasslockPOSIX
import PasslockTimers
import Testing

/// The daemon's idle timers on a ManualClock: when an idle lock comes, to
/// the second, without waiting for it.
@Suite struct IdleWatcherTests {
  static func tty(_ id: String) -> LogindSession {
    LogindSession(id: id, path: "/org/freedesktop/login1/session/\(id)", tty: "/dev/pts/\(id)", remote: false, vtNumber: 0)
  }

  /// A watcher over one TTY session whose last input was at `lastInput`
  /// (wall-clock seconds, changeable); the times it locked, in seconds from the start.
  final class Bed {
    let clock = ManualClock()
    lazy var loop = EventLoop(clock: clock)
    var lastInput: Int64
    let start: Int64
    var locked: [Int64] = []
    lazy var watcher = IdleWatcher(
      timeoutSeconds: 20, loop: loop, accessTime: { [unowned self] _ in lastInput },
      onIdle: { [unowned self] _ in locked.append(clock.wallClockSeconds - start) })

    init() {
      start = clock.wallClockSeconds
      lastInput = clock.wallClockSeconds
    }

    func after(_ seconds: Int64) { loop.advanceTime(byMilliseconds: seconds * 1000) }
    func typeNow() { lastInput = clock.wallClockSeconds }
  }

  /// The atime lags input by up to 8 s, so the lock waits those too: never early.
  @Test func aTTYSessionLocksTimeoutAndAtimeSlackAfterTheLastInput() {
    let bed = Bed()
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    #expect(bed.watcher.deadlines["1"] == bed.start + 28)
    bed.after(27)
    #expect(bed.locked.isEmpty)
    bed.after(1)
    #expect(bed.locked == [28])
  }

  @Test func inputMovesTheDeadline() {
    let bed = Bed()
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    bed.after(15)
    bed.typeNow()
    bed.after(13)  // the timer fires at 28, finds newer input, waits again
    #expect(bed.locked.isEmpty)
    bed.after(15)
    #expect(bed.locked == [43])
  }

  /// An idle inhibitor of the user's holds every idle lock off; once it
  /// goes the timeout counts again from then (the last input was earlier).
  @Test func anIdleInhibitorHoldsTheLockOffAndTheTimeoutCountsFromItsEnd() {
    let bed = Bed()
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    bed.after(5)
    bed.watcher.holdOff(true)
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    #expect(bed.watcher.deadlines.isEmpty, "no deadline while held off")
    bed.after(100)
    #expect(bed.locked.isEmpty, "held off past the timeout")
    bed.watcher.holdOff(false)
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    #expect(bed.watcher.deadlines["1"] == bed.start + 105 + 20)
    bed.after(19)
    #expect(bed.locked.isEmpty)
    bed.after(1)
    #expect(bed.locked == [125])
  }

  /// …or from the last input, when that came later than the inhibitor's end.
  @Test func afterTheInhibitorLaterInputCounts() {
    let bed = Bed()
    bed.watcher.holdOff(true)
    bed.after(50)
    bed.watcher.holdOff(false)
    bed.after(10)
    bed.typeNow()  // at 60, after the end at 50
    bed.watcher.update(sessions: [Self.tty("1")], enabled: true)
    #expect(bed.watcher.deadlines["1"] == bed.start + 60 + 8 + 20)
  }

  /// A graphical session's IdleHint: one timer at IdleSinceHint + timeout, to the microsecond.
  @Test func aGraphicalSessionLocksAtIdleSincePlusTheTimeout() {
    let bed = Bed()
    let since = UInt64(bed.clock.wallClockMicroseconds) + 2_500_000
    bed.after(3)
    bed.watcher.hint("g", idle: true, sinceMicroseconds: since, enabled: true)
    bed.loop.advanceTime(byMilliseconds: 19_499)
    #expect(bed.locked.isEmpty)
    bed.loop.advanceTime(byMilliseconds: 1)
    #expect(bed.locked.count == 1)
    bed.watcher.hint("g", idle: false, sinceMicroseconds: since, enabled: true)
    #expect(bed.watcher.deadlines["g"] == nil, "active again: no timer")
  }

  @Test func disabledWatchesNothing() {
    let bed = Bed()
    bed.watcher.update(sessions: [Self.tty("1")], enabled: false)
    bed.after(100)
    #expect(bed.locked.isEmpty && bed.watcher.deadlines.isEmpty)
  }
}

/// logind's Inhibit retried after a moment's failure: one chain, doubling to 5 s.
@Suite struct RetryChainTests {
  @Test func delaysDoubleFrom100MillisecondsTo5Seconds() {
    #expect((1...9).map { RetryDelay.milliseconds(afterFailures: $0) } == [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000])
  }

  @Test func oneChainHoweverManyPathsAsk() {
    let loop = EventLoop(clock: ManualClock())
    let chain = RetryChain(loop: loop)
    var retries = 0
    chain.failed { retries += 1 }
    chain.failed { retries += 1 }  // a second path asks while one retry waits
    #expect(chain.isWaiting)
    loop.advanceTime(byMilliseconds: 199)
    #expect(retries == 1, "one retry, after the first delay")
    #expect(!chain.isWaiting)
    chain.failed { retries += 1 }
    loop.advanceTime(byMilliseconds: 199)
    #expect(retries == 1, "the second failure waits 200 ms")
    loop.advanceTime(byMilliseconds: 1)
    #expect(retries == 2)
    chain.reset()
    #expect(chain.failures == 0 && !chain.isWaiting)
  }
}
