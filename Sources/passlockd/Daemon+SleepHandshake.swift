import Glibc

#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
  import PasslockTimers
#endif

/// The sleep handshake: SleepHandshake (PasslockCore) decides; this carries
/// out its effects (locks, status checks, logind's delay inhibitor, and
/// `sleep-ready` for the system sleep hook) and reports what happened to it.
extension Daemon {
  /// Hands `event` to the handshake and carries out what it answers.
  func sleepEvent(_ event: SleepHandshake.Event) {
    for effect in handshake.handle(event, now: loopMilliseconds) {
      switch effect {
      case .lock(let ids):
        for id in ids.sorted() {
          guard let session = sessions[id] else {
            sleepEvent(.sessionRemoved(id))
            continue
          }
          lock(session.info, reason: "sleep")
          // Already locked and on screen, or covered now: nothing to wait for.
          if sessions[id]?.lock?.showsLock == true { sleepEvent(.lockPresented(id)) }
        }
      case .checkStatus(let delay):
        // On the way to sleep the check waits until the lock screens have
        // drawn (a few ms): on two cores a gatekeeper started now would
        // compete with them for the frame. Asked synchronously when it
        // decides whether anything is locked at all.
        if delay == 0 {
          refreshPasscode()
        } else {
          loop.after(milliseconds: delay) { [self] in refreshPasscodeInBackground() }
        }
      case .takeInhibitor:
        takeInhibitor()
      case .releaseInhibitor:
        releaseInhibitor()
      case .letSleep(let elapsed):
        releaseInhibitor()
        sleepHook?.markReady()
        Log.info(
          handshake.locks
            ? "every lock screen is up \(elapsed) ms after PrepareForSleep; sleep may proceed"
            : "no passcode is set: sleep may proceed without a lock")
      }
    }
  }

  /// The loop's monotonic clock in milliseconds (the handshake's time).
  var loopMilliseconds: Int64 { Int64(loop.clock.monotonicNanoseconds / 1_000_000) }

  /// The sessions a sleep waits for: each local one that does not show a
  /// lock yet (covered and adopted ones show theirs). Which of them nothing
  /// can lock is for `lock` to find (it reports `cannotLock`): only as a
  /// lock starts is the session's compositor looked for.
  func sessionsToShowLocks() -> Set<String> {
    Set(
      localSessions().filter { session in
        switch sessions[session.id]?.lock {
        case .running(let locker)?: return !locker.isReady
        case .adopted?, .covered?: return false
        case nil: return true
        }
      }.map { $0.id })
  }

  func takeInhibitor() {
    guard inhibitor == nil, !inhibitRetries.isWaiting else { return }
    do {
      inhibitor = try logind.inhibitSleep()
      if inhibitRetries.failures > 0 { Log.info("took the sleep inhibitor after \(inhibitRetries.failures + 1) tries") }
      inhibitRetries.reset()
      noteInhibitor(problem: nil)
      sleepEvent(.inhibitorGranted)
    } catch {
      sleepEvent(.inhibitorLost)
      if Self.isRefusal(error) {
        // Not transient: retried when polkit or logind comes (back) on the bus.
        noteInhibitor(problem: "logind refused a sleep delay inhibitor (\(error.name ?? "")): there is no polkit to allow it")
        return
      }
      // Right after resume logind may still answer "operation in progress":
      // one retry chain, however many paths ask, said once per streak.
      let delay = inhibitRetries.failed { [self] in
        if handshake.locks && !handshake.preparing { takeInhibitor() }
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
      Log.warning("\(problem); the lock before sleep is kept by \(SleepHookFiles.keptBy)")
    } else {
      Log.error(
        "\(problem), and \(SleepHookFiles.hook) is not installed: the machine may sleep before the lock screen is up; "
          + "install polkitd, or passlock's package or scripts/install, whose sleep hook and \(SleepHookFiles.unit) wait for the lock screen"
      )
    }
  }

  func releaseInhibitor() {
    guard let fd = inhibitor else { return }
    close(fd)
    inhibitor = nil
  }
}
