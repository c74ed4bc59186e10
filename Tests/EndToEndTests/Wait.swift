import Foundation

/// The end-to-end tests' one wait: polls `condition` until it holds or
/// `seconds` pass, and says whether it held. Tests wait for the state they
/// mean, never for a fixed time before an assertion.
enum Wait {
  @discardableResult
  static func until(_ seconds: Double = 5, every microseconds: UInt32 = 5_000, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
      guard Date() < deadline else { return condition() }
      usleep(microseconds)
    }
    return true
  }
}
