/// The console holder's lock sequence (passlock-vt), as a state machine of
/// the shape LockScreen has: events in, effects out, time passed in. It
/// decides the order of a console lock; passlock-vt's ConsoleLockRun carries
/// the effects out over the console and reports what happened as events.
///
/// The order, and why:
/// - The lock VT comes on screen cleared, and the holder paints its own
///   first frame on it as soon as switching is locked (`painted`), or the
///   first lock screen runs first: the session is hidden a lock screen's
///   start-up, and the frame's rendering, sooner (physlock too switches
///   first).
///   With the holder's frame there, the lock screen starts once switching is
///   locked, not beside a display server giving up its VT.
/// - Once switching is locked, the lock stands unless the holder's own
///   status check *says* nothing could unlock it (no passcode, a gatekeeper
///   that cannot work here): then the console is given back at once,
///   before the daemon hears of a lock (the lock screen may draw from a
///   cached status, so its frame alone proves nothing). No answer, a late
///   or failed first frame, a lock screen that did not start: the lock
///   stands all the same (fail closed), and supervision starts lock screens
///   until one is unlocked. The status check starts once switching is
///   locked: started before, the gatekeeper would hold up the switch and
///   compete with the lock screen.
/// - Over a lock a killed holder left (`stale`), the frame and the status
///   come first: giving the console back afterwards would undo that lock too.
/// - The caller can stop the holder between the checks and the lock, so the
///   session is checked again once switching is locked.
/// - From the lock screen's start until the lock stands the holder runs
///   real-time (raisePriority … lowerPriority).
/// - Then the lock screens are supervised: only an exit 0 unlocks; others
///   restart with RestartBackoff, and when they keep failing the lock VT
///   says how to get out, and the console stays locked.
public struct ConsoleLockSequence: Hashable, Sendable {
  public enum Event: Equatable, Sendable {
    /// The lock VT is allocated, opened and in raw mode. `painted`: the
    /// holder's own first frame is on it, or will be once switching is
    /// locked (before any lock screen starts). `stale`: a killed holder's lock
    /// is still in force.
    case prepared(painted: Bool, stale: Bool)
    case lockScreenStarted
    case lockScreenDidNotStart(String)
    /// Switching is locked on the lock VT (the settle watch follows).
    case switchingLocked
    /// The lock could not be made or did not settle (the console keeps its
    /// state; the reason is the holder's error).
    case lockFailed
    /// The lock settled: the lock VT stays on screen.
    case settled
    /// The caller's session checked again once switching is locked (nil: still theirs).
    case sessionChecked(Refusal?)
    case firstFrame(FrameOutcome)
    /// The holder's own status check: why nothing could unlock, when the
    /// gatekeeper said so; nil otherwise (a passcode is set, or no answer).
    case statusAnswered(refusal: String?)
    /// A supervised lock screen ended, after running `ranForSeconds`.
    case lockScreenExited(status: Int32, ranForSeconds: Double)
  }

  /// How the wait for the first lock screen's frame ended (passlock-vt's
  /// waitForFrame answers with it).
  public enum FrameOutcome: Equatable, Sendable {
    case drawn
    /// It exited first (with this status; it has been reaped).
    case exited(status: Int32)
    /// Nothing within the bound (it still runs).
    case late
  }

  /// Why the holder gives up, and the status it exits with.
  public struct Refusal: Equatable, Sendable {
    public var reason: String
    public var status: ConsoleHolder.Exit
    public init(_ reason: String, status: ConsoleHolder.Exit = .refused) {
      self.reason = reason
      self.status = status
    }
  }

  public enum Effect: Equatable, Sendable {
    case startLockScreen
    case startStatusCheck
    case cancelStatusCheck
    case raisePriority
    case lowerPriority
    /// Switch to the lock VT and lock switching (then `.switchingLocked`
    /// or `.lockFailed`).
    case lockSwitching
    /// Watch that the lock VT stays on screen (a switch requested just
    /// before the lock is carried out later), then mute the console (then
    /// `.settled` or `.lockFailed`).
    case settle
    case checkSessionAgain
    /// Wait, with one bound, for the first frame and the status answer.
    case awaitFirstFrameAndStatus
    case stopLockScreen
    /// Nothing was locked: the lock VT is freed; the holder exits refusing
    /// (nil: with the lock's own error).
    case abandon(Refusal?)
    /// The lock is undone: everything restored; the holder exits refusing.
    case giveBack(Refusal)
    /// The lock stands: the ready byte for the daemon.
    case reportReady
    /// Supervise the running lock screen until it exits.
    case supervise
    case showEmergency
    /// After this many milliseconds, drop unread keys (not the next lock
    /// screen's passcode) and start the next lock screen.
    case restartLockScreen(afterMilliseconds: Int)
    /// A real unlock: everything restored, the original VT back; exit 0.
    case unlock
  }

  public enum Phase: Hashable, Sendable {
    case preparing
    /// Over a stale lock: the frame and the status before the lock.
    case checkingBeforeLock
    case locking
    case checkingSession
    case awaitingLockStands
    case supervising
    case ended
  }

  public private(set) var phase: Phase = .preparing
  private var stale = false
  private var startsOnceLocked = false
  private var switchingIsLocked = false
  private var lockScreenRunning = false
  private var statusCheckRunning = false
  private var backoff = RestartBackoff()

  /// How long, at most, the frame and the status answer are waited for together.
  public static let lockStandsWithinSeconds = 10.0

  public init() {}

  /// Whether `event` can come in this phase: the events ConsoleLockRun
  /// reports are answers to this sequence's own effects, so any other is a
  /// bug in the interpreter (nothing comes after the end: it has exited).
  public func expects(_ event: Event) -> Bool {
    switch event {
    case .prepared: phase == .preparing
    case .lockScreenStarted, .lockScreenDidNotStart:
      phase == .checkingBeforeLock || phase == .locking || phase == .supervising
    case .switchingLocked, .lockFailed, .settled: phase == .locking
    case .sessionChecked: phase == .checkingSession
    case .firstFrame, .statusAnswered: phase == .checkingBeforeLock || phase == .awaitingLockStands
    case .lockScreenExited: phase == .supervising
    }
  }

  public mutating func handle(_ event: Event) -> [Effect] {
    // Trapped in debug builds; ignored otherwise (nothing is given back on
    // an event that cannot happen).
    guard expects(event) else {
      assertionFailure("console lock sequence: \(event) in phase \(phase)")
      return []
    }
    switch event {
    case .prepared(let painted, let stale):
      self.stale = stale
      startsOnceLocked = painted && !stale
      let start: [Effect] = startsOnceLocked ? [] : [.startLockScreen]
      if stale {
        phase = .checkingBeforeLock
        statusCheckRunning = true
        return start + [.raisePriority, .startStatusCheck, .awaitFirstFrameAndStatus]
      }
      phase = .locking
      return start + [.raisePriority, .lockSwitching]

    case .lockScreenStarted:
      lockScreenRunning = true
      if phase == .supervising { return [.supervise] }
      // Started once switching was locked: now the status check (not for
      // a lock screen that did not start).
      if phase == .locking && switchingIsLocked && !stale {
        statusCheckRunning = true
        return [.startStatusCheck]
      }
      return []

    case .lockScreenDidNotStart(let reason):
      switch phase {
      case .supervising: return [.showEmergency, .restartLockScreen(afterMilliseconds: 5_000)]
      case .locking where switchingIsLocked:
        // The lock stands without it (supervision starts another); the
        // status check still says whether anything could unlock.
        guard !stale, !statusCheckRunning else { return [] }
        statusCheckRunning = true
        return [.startStatusCheck]
      default:
        phase = .ended
        return cancelStatus() + [.abandon(Refusal(reason))]
      }

    case .switchingLocked:
      switchingIsLocked = true
      // What starts once switching is locked starts before the settle watch
      // (a raced switch is taken back that much later; SwitchWatch still
      // sees it). A failure there is answered once the lock has settled.
      if startsOnceLocked { return [.startLockScreen, .settle] }  // its start brings the status check
      guard !stale else { return [.settle] }  // asked before the lock
      statusCheckRunning = true
      return [.startStatusCheck, .settle]

    case .lockFailed:
      phase = .ended
      return cancelStatus() + stopLockScreen() + [.abandon(nil)]

    case .settled:
      phase = .checkingSession
      return [.checkSessionAgain]

    case .sessionChecked(let refusal):
      if let refusal {
        phase = .ended
        return cancelStatus() + stopLockScreen() + [.giveBack(refusal)]
      }
      if stale { return standing() }
      phase = .awaitingLockStands
      return [.awaitFirstFrameAndStatus]

    case .firstFrame(let outcome):
      if case .exited = outcome { lockScreenRunning = false }
      return []

    case .statusAnswered(let refusal):
      statusCheckRunning = false
      // Only the gatekeeper saying nothing could unlock undoes the lock: a
      // lock screen that drew nothing in time, exited or did not start is
      // no reason (supervision starts another).
      let problem = refusal.map { Refusal("the lock screen cannot start: \($0); refusing to lock") }
      switch phase {
      case .checkingBeforeLock:
        if let problem {
          phase = .ended
          return stopLockScreen() + [.abandon(problem)]
        }
        phase = .locking
        return [.lockSwitching]
      case .awaitingLockStands:
        if let problem {
          phase = .ended
          return stopLockScreen() + [.giveBack(problem)]
        }
        return standing()
      default:
        return []
      }

    case .lockScreenExited(let status, let ranFor):
      lockScreenRunning = false
      if status == 0 {
        phase = .ended
        return [.unlock]
      }
      let delay = backoff.failed(afterRunning: ranFor)
      if backoff.keepsFailing { return [.showEmergency, .restartLockScreen(afterMilliseconds: 30_000)] }
      return [.restartLockScreen(afterMilliseconds: delay)]
    }
  }

  /// The lock stands: the ready byte, and the lock screens supervised.
  private mutating func standing() -> [Effect] {
    phase = .supervising
    return [.lowerPriority, .reportReady, .supervise]
  }

  private mutating func stopLockScreen() -> [Effect] {
    guard lockScreenRunning else { return [] }
    lockScreenRunning = false
    return [.stopLockScreen]
  }

  private mutating func cancelStatus() -> [Effect] {
    guard statusCheckRunning else { return [] }
    statusCheckRunning = false
    return [.cancelStatusCheck]
  }
}
