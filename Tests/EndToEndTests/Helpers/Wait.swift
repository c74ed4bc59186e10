import Foundation
import PasslockCore

/// The end-to-end tests' one wait: every poll loop goes through it. Tests
/// wait for the state they mean, never for a fixed time before an
/// assertion; a negative assertion ("nothing happened") watches its whole
/// window (`holds`), and a duration comes from the code under test.
enum Wait {
  /// Polls `condition` until it holds or `seconds` pass; whether it held.
  @discardableResult
  static func until(_ seconds: Double = 5, every microseconds: UInt32 = 5_000, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
      guard Date() < deadline else { return condition() }
      usleep(microseconds)
    }
    return true
  }

  /// Polls `produce` until it gives a value or `seconds` pass.
  static func value<T>(_ seconds: Double = 5, every microseconds: UInt32 = 5_000, _ produce: () -> T?) -> T? {
    var value: T?
    until(seconds, every: microseconds) {
      value = produce()
      return value != nil
    }
    return value
  }

  /// For a negative assertion: looks at `condition` throughout `seconds`;
  /// whether it held every time (false at its first break).
  static func holds(for seconds: Double, every microseconds: UInt32 = 20_000, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      guard condition() else { return false }
      usleep(microseconds)
    }
    return condition()
  }

  /// Past a wrong passcode's shake, while which the lock screen refuses
  /// keys (LockScreen.shakeMilliseconds, and a frame's margin): the keys
  /// typed next count. Nothing on screen marks its end.
  static func pastShake() {
    usleep(UInt32(LockScreen.shakeMilliseconds + 100) * 1000)
  }
}
