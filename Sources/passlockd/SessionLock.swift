import Glibc

/// How one session is locked: passlockd keeps one of these per locked
/// session (`TrackedSession.lock`), and a session without one is unlocked.
enum SessionLock {
  /// A lock screen or console holder this daemon started (its child).
  case running(Locker)
  /// One a previous daemon started that outlived it (not our child: polled).
  case adopted(pid: pid_t, consoleHolder: Bool)
  /// No lock screen of its own: `by`'s console lock has switching locked on
  /// the seat, so nothing of this session can come on screen.
  case covered(by: String)

  var locker: Locker? {
    if case .running(let locker) = self { return locker }
    return nil
  }

  /// The process holding the lock, where there is one.
  var pid: pid_t? {
    switch self {
    case .running(let locker): return locker.pid
    case .adopted(let pid, _): return pid
    case .covered: return nil
    }
  }

  /// A console holder's lock: it covers the seat's other sessions.
  var isConsoleLock: Bool {
    switch self {
    case .running(let locker): return locker.isConsoleHolder
    case .adopted(_, let consoleHolder): return consoleHolder
    case .covered: return false
    }
  }

  /// Its lock is on screen: the locker's ready byte came, or another
  /// process holds it (an adopted locker, a covering console lock).
  var showsLock: Bool {
    switch self {
    case .running(let locker): return locker.isReady
    case .adopted, .covered: return true
    }
  }

  var coveringSession: String? {
    if case .covered(let by) = self { return by }
    return nil
  }
}
