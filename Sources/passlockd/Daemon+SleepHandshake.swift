import Glibc
import PasslockBus
import PasslockClient
import PasslockCore
import PasslockPOSIX

/// The sleep handshake: a logind delay inhibitor while a passcode exists,
/// released once every lock screen has drawn its first frame.
extension Daemon {
  func takeInhibitor() {
    guard inhibitor == nil else { return }
    do {
      inhibitor = try logind.inhibitSleep()
      inhibitRetry = 0
    } catch {
      // Right after resume logind may still answer "operation in progress".
      inhibitRetry += 1
      let delay = min(5000, 50 << min(inhibitRetry, 7))
      Log.warning("Inhibit failed (\(error)); retrying in \(delay) ms")
      loop.after(milliseconds: Int64(delay)) { [unowned self] in
        if passcodeSet && !preparingForSleep { takeInhibitor() }
      }
    }
  }

  func releaseInhibitor() {
    guard let fd = inhibitor else { return }
    close(fd)
    inhibitor = nil
  }

  /// Lets the machine sleep once every lockable session shows its lock screen.
  func releaseIfEveryLockerIsReady() {
    guard preparingForSleep, inhibitor != nil else { return }
    let pending = lockableSessions().filter {
      problems[$0.id] == nil && adopted[$0.id] == nil && lockers[$0.id]?.isReady != true
    }
    guard pending.isEmpty else { return }
    releaseInhibitor()
    let elapsed = Double(monotonicNanoseconds() - sleepSignalAt) / 1_000_000
    Log.info("every lock screen is up \(Int(elapsed)) ms after PrepareForSleep; sleep may proceed")
  }
}
