/// What passlock-vt (the console holder) and passlockd agree on: the holder's
/// exit statuses and where its root-owned record of a lock lives.
public enum ConsoleHolder {
  /// Its exit statuses.
  public enum Exit: Int32, Sendable {
    /// A lock screen exited 0: the console is back as it was.
    case unlocked = 0
    /// Nothing was locked: not the caller's console, no passcode, a lock
    /// screen that could not start… (the message says which).
    case refused = 1
    /// The display server on screen does not give up its VT: nothing locked.
    case stuck = 3
    /// Another user has a session on the seat: a console lock would shut
    /// them out, so nothing was locked (lock each session's own terminal).
    case sharedSeat = 4
    case usage = 64
  }

  /// The record `--release` restores the console from (root-owned).
  public static let statePath = "/run/passlock-vt.state"
}
