/// The statuses `passlock lock --wayland` ends with when nothing was locked
/// in the session, which passlockd reads to lock on a VT instead.
public enum WaylandLockExit: Int32, Sendable {
  /// The compositor refused the lock: another lock screen holds it.
  case heldElsewhere = 3
  /// No ext-session-lock-v1 (or no compositor, or passlock-wayland is not installed).
  case noSessionLock = 69

  public var reason: String {
    switch self {
    case .heldElsewhere: return "another lock screen holds the compositor's lock"
    case .noSessionLock: return "no ext-session-lock-v1 from the compositor, or no passlock-wayland (its error is in the journal)"
    }
  }
}
