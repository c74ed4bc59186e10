import Glibc
import PasslockBus
import PasslockClient
import PasslockCore
import PasslockPOSIX
import PasslockTimers

/// The sleep handshake: a logind delay inhibitor while a passcode exists,
/// released once every lock screen has drawn its first frame; and, for the
/// system sleep hook (SleepHookFiles), `sleep-ready` written at that moment.
extension Daemon {
  func takeInhibitor() {
    guard inhibitor == nil, !inhibitRetries.isWaiting else { return }
    do {
      inhibitor = try logind.inhibitSleep()
      if inhibitRetries.failures > 0 { Log.info("took the sleep inhibitor after \(inhibitRetries.failures + 1) tries") }
      inhibitRetries.reset()
      noteInhibitor(problem: nil)
    } catch {
      if Self.isRefusal(error) {
        // Not transient: retried when polkit or logind comes (back) on the bus.
        noteInhibitor(problem: "logind refused a sleep delay inhibitor (\(error.name ?? "")): there is no polkit to allow it")
        return
      }
      // Right after resume logind may still answer "operation in progress":
      // one retry chain, however many paths ask, said once per streak.
      let delay = inhibitRetries.failed { [unowned self] in
        if passcodeSet && !preparingForSleep { takeInhibitor() }
      }
      if inhibitRetries.failures == 1 { Log.warning("Inhibit failed (\(error)); retrying, every \(delay) ms at first, up to 5 s") }
    }
  }

  /// logind saying no (no polkit, or polkit's policy), as opposed to being busy.
  static func isRefusal(_ error: BusError) -> Bool {
    ["org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"]
      .contains(error.name ?? "")
  }

  /// Says once, clearly, whether the lock before sleep is still kept without
  /// the inhibitor: by the system sleep hook when it is installed.
  func noteInhibitor(problem: String?) {
    guard problem != inhibitorProblem else { return }
    inhibitorProblem = problem
    guard let problem else { return Log.info("the sleep inhibitor is held again") }
    if SleepHookFiles.hookInstalled {
      Log.warning("\(problem); the lock before sleep is kept by the system sleep hook \(SleepHookFiles.hook)")
    } else {
      Log.error(
        "\(problem), and \(SleepHookFiles.hook) is not installed: the machine may sleep before the lock screen is up; "
          + "install polkitd, or passlock's package or scripts/install, whose sleep hook waits for the lock screen")
    }
  }

  func releaseInhibitor() {
    guard let fd = inhibitor else { return }
    close(fd)
    inhibitor = nil
  }

  /// Lets the machine sleep once every lockable session shows its lock screen.
  func releaseIfEveryLockerIsReady() {
    guard preparingForSleep, !readyForSleep else { return }
    let pending = localSessions().filter { session in
      // One that cannot be locked (a stuck console holder being retried) is not waited for.
      guard problems[session.id] == nil else { return false }
      switch locks[session.id] {
      case .running(let locker)?: return !locker.isReady  // (an in-session lock too, which plan() alone does not foresee)
      case .adopted?, .covered?: return false
      case nil: return plan(session).locks  // not locked yet
      }
    }
    guard pending.isEmpty else { return }
    sleepMayProceed()
    let elapsed = Double(monotonicNanoseconds() - sleepSignalAt) / 1_000_000
    Log.info("every lock screen is up \(Int(elapsed)) ms after PrepareForSleep; sleep may proceed")
  }

  /// Nothing (more) to wait for before this sleep: the inhibitor goes and
  /// the sleep hook is told.
  func sleepMayProceed() {
    releaseInhibitor()
    guard preparingForSleep, !readyForSleep else { return }
    readyForSleep = true
    sleepHook?.markReady()
  }
}
