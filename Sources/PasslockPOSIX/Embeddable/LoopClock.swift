import Glibc

/// The time an EventLoop (and what it schedules) goes by.
public protocol LoopClock: AnyObject {
  /// Monotonic nanoseconds: timers' deadlines.
  var monotonicNanoseconds: UInt64 { get }
  /// Wall-clock microseconds since the epoch: tty access times, logind's
  /// IdleSinceHint and stored deadlines are in wall-clock time.
  var wallClockMicroseconds: Int64 { get }
}

extension LoopClock {
  public var wallClockSeconds: Int64 { wallClockMicroseconds / 1_000_000 }
}

/// The system's clocks (CLOCK_MONOTONIC, CLOCK_REALTIME).
public final class SystemClock: LoopClock {
  public init() {}
  public var monotonicNanoseconds: UInt64 { systemMonotonicNanoseconds() }
  public var wallClockMicroseconds: Int64 { systemWallClockMicroseconds() }
}

// The clocks' functions under names the properties above do not hide (a
// module-qualified call would not build where the module is the program).
private func systemMonotonicNanoseconds() -> UInt64 { monotonicNanoseconds() }
private func systemWallClockMicroseconds() -> Int64 { wallClockMicroseconds() }

/// A test's clock: still until moved (EventLoop.advanceTime moves both).
public final class ManualClock: LoopClock {
  public private(set) var monotonicNanoseconds: UInt64
  private let wallClockStart: Int64
  private let monotonicStart: UInt64

  public init(wallClockSeconds: Int64 = 1_800_000_000) {
    monotonicNanoseconds = 1_000_000_000
    monotonicStart = monotonicNanoseconds
    wallClockStart = wallClockSeconds * 1_000_000
  }

  /// Wall-clock time moves with the monotonic clock (no jumps in tests).
  public var wallClockMicroseconds: Int64 {
    wallClockStart + Int64((monotonicNanoseconds - monotonicStart) / 1000)
  }

  func set(monotonicNanoseconds value: UInt64) { monotonicNanoseconds = value }
}
