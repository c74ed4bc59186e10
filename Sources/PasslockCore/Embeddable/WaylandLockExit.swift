/// The statuses `passlock lock --wayland` ends with when nothing is locked
/// in the session (any more), which passlockd reads to lock without it.
public enum WaylandLockExit: Int32, Sendable {
  /// The compositor refused the lock: another lock screen holds it.
  case heldElsewhere = 3
  /// No ext-session-lock-v1 (or no compositor, or passlock-wayland is not installed).
  case noSessionLock = 69
  /// The connection to the compositor broke while locked: its lock is gone
  /// with it, and whatever the session has besides may be on screen.
  case compositorGone = 129

  public var reason: String {
    switch self {
    case .heldElsewhere: return "another lock screen holds the compositor's lock"
    case .noSessionLock: return "no ext-session-lock-v1 from the compositor, or no passlock-wayland (its error is in the journal)"
    case .compositorGone: return "the compositor went away"
    }
  }
}
