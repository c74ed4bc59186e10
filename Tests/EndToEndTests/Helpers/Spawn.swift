import Foundation
import PasslockPOSIX

/// posix_spawn for tests that need more than Foundation's Process gives: a
/// clean signal mask (the runner's threads block most signals) and extra
/// descriptors mapped into the child (`--ready-fd`).
enum Spawn {
  static func start(_ argv: [String], environment: [String: String], descriptors: [(parent: Int32, child: Int32)] = []) -> pid_t? {
    try? ChildProcess.launch(
      argv[0], arguments: argv, descriptors: descriptors, environment: environment.map { "\($0)=\($1)" })
  }

  /// Waits up to `seconds` for `pid` to exit; its status, or nil if it is still running.
  static func wait(_ pid: pid_t, seconds: Double) -> Int32? {
    var status: Int32 = 0
    guard Wait.until(seconds, every: 10_000, { waitpid(pid, &status, WNOHANG) == pid }) else { return nil }
    return (status >> 8) & 0xff
  }
}

/// The kernel's consoles are one shared resource: tests that allocate, switch
/// or lock VTs take this first, whichever suite they are in. Suites run in
/// parallel threads (a semaphore: a test's init and deinit may run on
/// different threads) and other test processes may run at once (an flock on
/// one machine-wide lock file, held while the semaphore is).
enum ConsoleAccess {
  nonisolated(unsafe) static let semaphore = DispatchSemaphore(value: 1)  // DispatchSemaphore is thread-safe
  static let lockFile = "/tmp/passlock-console-tests.lock"
  /// The lock file's descriptor; only touched by the semaphore's holder.
  nonisolated(unsafe) static var held: Int32 = -1

  struct NotReleased: Error, CustomStringConvertible {
    var description: String {
      "the console lock was not released in \(Int(ConsoleAccess.patience)) s: another test (or test process) holds it"
    }
  }
  /// Longer than any console test takes; a holder that never lets go fails
  /// the waiting test instead of hanging the whole run.
  static let patience: Double = 300

  static func acquire() throws {
    guard semaphore.wait(timeout: .now() + patience) == .success else { throw NotReleased() }
    held = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard Wait.until(patience, every: 20_000, { held < 0 || flock(held, LOCK_EX | LOCK_NB) == 0 }) else {
      close(held)
      held = -1
      semaphore.signal()
      throw NotReleased()
    }
  }

  static func release() {
    if held >= 0 {
      flock(held, LOCK_UN)
      close(held)
      held = -1
    }
    semaphore.signal()
  }
}
