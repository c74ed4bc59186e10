/// passlockd's part in a suspend, as a state machine of the shape LockScreen
/// and ConsoleLockSequence have: events in, effects out, time passed in. The
/// one place that lets the machine sleep (`.letSleep`: the delay inhibitor
/// goes and the system sleep hook is told).
///
/// The rules, and why:
/// - A delay inhibitor is held while the session may need a lock before
///   sleep: whenever the gatekeeper has not *said* there is nothing to lock
///   with. Not knowing (the gatekeeper killed, stopped, not started) keeps
///   the last answer, and before any answer counts as "set": fail closed.
/// - At PrepareForSleep every session that gets a lock screen is locked,
///   and the sleep goes on only once each shows a lock frame (its locker's
///   ready byte) or is covered by another session's console lock. A locker
///   that fails is started again by the daemon; its session keeps the sleep
///   waiting (logind's InhibitDelayMaxSec bounds that wait, never us).
/// - Only the gatekeeper saying that no passcode is set lets a prepared
///   sleep go on without locks. An error never does.
/// - The store is checked again shortly after PrepareForSleep (a passcode
///   removed behind the daemon's back), once the lock screens have drawn.
public struct SleepHandshake: Hashable, Sendable {
  /// What the gatekeeper last said about the passcode.
  public enum Passcode: Hashable, Sendable {
    /// No answer yet: treated as set.
    case unknown
    case set
    /// The gatekeeper said so (or that it cannot work at all): nothing to lock with.
    case notSet
  }

  public enum Event: Equatable, Sendable {
    /// The gatekeeper's status was asked (StatusReading: `.unknown` is no answer).
    case statusChecked(StatusReading)
    /// logind's PrepareForSleep(true); `sessions` are those that get a lock
    /// screen and show none yet.
    case prepareForSleep(sessions: Set<String>)
    /// A session shows its lock frame (the ready byte), or is covered by a
    /// console lock: nothing of it can come on screen.
    case lockPresented(String)
    /// A lock screen was started for the session (again: one that covered
    /// it ended, a refused one is replaced): its frame is waited for.
    case lockStarted(String)
    /// A session's locker ended or could not start before its frame.
    case lockFailed(String)
    /// The session ended (logged out): there is nothing of it to show.
    case sessionRemoved(String)
    /// Nothing can lock the session as it is (LockPlan.cannot: no terminal
    /// of its own, a display server's session in the background): waiting
    /// would not bring a frame. (A locker that fails is `lockFailed`.)
    case cannotLock(String)
    /// Its desktop locks it by itself (SelfLockingDesktop): passlock's
    /// lock is not shown there, and the sleep does not wait for one.
    case leftToDesktop(String)
    /// PrepareForSleep(false).
    case resumed
    case inhibitorGranted
    /// The daemon holds none: logind refused it (for good: no polkit),
    /// failed (for a moment), or left the bus.
    case inhibitorLost
  }

  public enum Effect: Equatable, Sendable {
    /// Lock these sessions (they are not locked yet, or their lock is on its way).
    case lock(Set<String>)
    /// Ask the gatekeeper for the status, at once or after a delay.
    case checkStatus(afterMilliseconds: Int64)
    case takeInhibitor
    case releaseInhibitor
    /// The sleep may go on: the inhibitor goes, and the sleep hook reads
    /// `sleep-ready`. `afterMilliseconds`: since PrepareForSleep.
    case letSleep(afterMilliseconds: Int64)
  }

  /// How long after PrepareForSleep the store is checked again.
  public static let checkDelayMilliseconds: Int64 = 25

  public private(set) var passcode: Passcode = .unknown
  public private(set) var preparing = false
  /// Sessions whose lock frame the sleep waits for.
  public private(set) var waitingFor: Set<String> = []
  /// The sleep at hand was let go.
  public private(set) var released = false
  public private(set) var inhibitorHeld = false
  /// When PrepareForSleep came (the loop's monotonic ms).
  private var preparedAt: Int64 = 0

  public init() {}

  /// Whether sessions are locked at all: unless the gatekeeper said no passcode.
  public var locks: Bool { passcode != .notSet }

  /// `now`: the loop's monotonic clock, in milliseconds.
  public mutating func handle(_ event: Event, now: Int64) -> [Effect] {
    switch event {
    case .statusChecked(let reading):
      let before = passcode
      switch reading {
      case .passcodeSet, .storeRefused: passcode = .set
      case .noPasscode, .gatekeeperUnavailable: passcode = .notSet
      case .unknown: break  // no answer: what was known stays
      }
      guard locks else {
        // Nothing to lock with, as the gatekeeper says: a prepared sleep goes on.
        waitingFor = []
        return releaseInhibitor() + letSleep(now)
      }
      guard preparing else { return takeInhibitor() }
      // Said to be unset at PrepareForSleep, set after all: lock what waits.
      guard before == .notSet, !released else { return [] }
      return waitingFor.isEmpty ? letSleep(now) : [.lock(waitingFor)]

    case .prepareForSleep(let sessions):
      preparing = true
      released = false
      preparedAt = now
      guard locks else {
        // Said to be unset, maybe long ago: asked again before the sleep goes on.
        waitingFor = sessions
        return [.checkStatus(afterMilliseconds: 0)]
      }
      waitingFor = sessions
      let lock: [Effect] = sessions.isEmpty ? [] : [.lock(sessions)]
      return lock + [.checkStatus(afterMilliseconds: Self.checkDelayMilliseconds)] + (sessions.isEmpty ? letSleep(now) : [])

    case .lockPresented(let id), .sessionRemoved(let id), .cannotLock(let id), .leftToDesktop(let id):
      guard waitingFor.remove(id) != nil, preparing, locks, waitingFor.isEmpty else { return [] }
      return letSleep(now)

    case .lockStarted(let id):
      if preparing && !released && locks { waitingFor.insert(id) }
      return []

    case .lockFailed:
      // The daemon starts it again; the sleep keeps waiting for its frame.
      return []

    case .resumed:
      preparing = false
      released = false
      waitingFor = []
      return locks ? takeInhibitor() : []

    case .inhibitorGranted:
      inhibitorHeld = true
      // Granted while it is not wanted (a slow answer): give it back.
      return preparing || !locks ? releaseInhibitor() : []

    case .inhibitorLost:
      inhibitorHeld = false
      return []
    }
  }

  /// Asked for whenever it is wanted and not held (the daemon asks logind
  /// once at a time, and retries a moment's failure itself).
  private func takeInhibitor() -> [Effect] { inhibitorHeld || preparing ? [] : [.takeInhibitor] }

  private mutating func releaseInhibitor() -> [Effect] {
    guard inhibitorHeld else { return [] }
    inhibitorHeld = false
    return [.releaseInhibitor]
  }

  /// The one place a prepared sleep is let go.
  private mutating func letSleep(_ now: Int64) -> [Effect] {
    guard preparing, !released else { return [] }
    released = true
    inhibitorHeld = false
    return [.letSleep(afterMilliseconds: now - preparedAt)]
  }
}
