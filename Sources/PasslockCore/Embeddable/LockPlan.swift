/// One of the user's logind sessions, as passlockd reads it (ListSessions and
/// the session's TTY, Remote, VTNr, Type, Leader, Seat and Desktop properties).
public struct LogindSession: Equatable, Sendable {
  public var id: String
  public var path: String
  /// The session's terminal as a path (/dev/tty3, /dev/pts/1), or empty.
  public var tty: String
  public var remote: Bool
  public var vtNumber: UInt32
  /// tty, x11, wayland, mir, unspecified…
  public var type: String
  /// The session's leader process (login, a shell), 0 when unknown.
  public var leader: UInt32
  /// The seat it is on ("seat0"), or empty.
  public var seat: String
  /// The desktop the display manager opened it for (XDG_SESSION_DESKTOP:
  /// "gnome", "KDE"…), or empty. Set as the session is made (another
  /// user cannot set or change it; its owner chose it at login).
  public var desktop: String

  public init(
    id: String, path: String, tty: String, remote: Bool, vtNumber: UInt32, type: String = "tty", leader: UInt32 = 0,
    seat: String = "", desktop: String = ""
  ) {
    self.id = id
    self.path = path
    self.tty = tty
    self.remote = remote
    self.vtNumber = vtNumber
    self.type = type
    self.leader = leader
    self.seat = seat
    self.desktop = desktop
  }

  /// Whether a logind session of class `sessionClass` is a login of the
  /// user's own: `user` (and systemd 256's `user-early`, `user-incomplete`,
  /// `user-light`…). Not the user manager's (`manager`, Debian 13 gives
  /// every user one), a greeter's, a lock screen's or `background` ones.
  public static func isLogin(sessionClass: String) -> Bool { sessionClass.hasPrefix("user") }

  /// A display server's session: it may have a VT but no TTY.
  public var isGraphical: Bool { ["x11", "wayland", "mir"].contains(type) }
}

/// How passlockd locks a session, or why it does not: the one place that
/// decides which sessions get a lock screen and of which kind.
public enum LockPlan: Equatable, Sendable {
  /// Left alone: a remote session (ssh) is not at this machine's screen.
  case remote
  /// Left to its desktop's own lock screen (GNOME Shell, KDE Plasma: they
  /// lock on logind's Lock, before sleep and when idle, by themselves): a
  /// second lock on top would have the user unlock twice.
  case desktop(String)
  /// On a VT of its own over the session's VT (passlock-vt, as physlock):
  /// a console login on its VT, or a display server's session on a VT.
  case virtualConsole(Int32)
  /// On the session's own terminal (`passlock lock --tty`, as vlock).
  case terminal(String)
  /// In the session, through its Wayland compositor (`passlock lock
  /// --wayland`, ext-session-lock-v1, as swaylock): the display's socket name.
  case inSession(display: String)
  /// Local, but nothing can lock it; the reason goes to the log and status.
  case cannot(String)

  /// `consoleMode` is `[Console] Mode`; `canOpen` says whether this user
  /// can open a terminal for reading and writing. `seatShared`: the console
  /// holder refused because another user has a session on the seat (a
  /// console lock would shut them out), so a console login is locked on its
  /// own terminal instead, as vlock without -a does. `onScreen`: whether
  /// logind has the session active on its seat (nil when unknown). A console
  /// lock covers whatever is on screen, so a session in the background is
  /// locked on its own terminal; one with none (a display server's) cannot
  /// be locked until it comes to the front.
  /// `compositor`: the display of the session's Wayland compositor, when
  /// one runs in it, and `waylandLock` is `[Wayland] Lock`: in-session locks
  /// there, whatever else the session has (also behind another session,
  /// since the compositor keeps its lock surfaces), and before a VT.
  /// `selfLocking`: the desktop found locking the session by itself
  /// (SelfLockingDesktop, its process running in the session); unless
  /// `overDesktop` (`[Lock] OverDesktop`), the lock is left to it.
  public init(
    _ session: LogindSession, consoleMode: String, seatShared: Bool = false, onScreen: Bool? = nil,
    compositor: String? = nil, waylandLock: String = "in-session", selfLocking: SelfLockingDesktop? = nil,
    overDesktop: Bool = false, canOpen: (String) -> Bool
  ) {
    let onItsVT = session.vtNumber > 0 && (session.tty == "/dev/tty\(session.vtNumber)" || session.isGraphical)
    if session.remote {
      self = .remote
    } else if let selfLocking, !overDesktop {
      self = .desktop(selfLocking.name)
    } else if let compositor, waylandLock == "in-session" {
      self = .inSession(display: compositor)
    } else if consoleMode != "direct", onItsVT, !seatShared, onScreen != false {
      self = .virtualConsole(Int32(session.vtNumber))
    } else if session.tty.isEmpty {
      if seatShared {
        self = .cannot("another user has a session on this seat, and a \(session.type) session has no terminal of its own to lock")
      } else if onScreen == false && consoleMode != "direct" && onItsVT {
        self = .cannot("a \(session.type) session in the background has no terminal of its own to lock")
      } else {
        self = .cannot(session.isGraphical ? "a \(session.type) session without a VT (or Console.Mode=direct)" : "it has no TTY")
      }
    } else if !canOpen(session.tty) {
      self = .cannot("\(session.tty) cannot be opened by this user")
    } else {
      self = .terminal(session.tty)
    }
  }

  public var isInSession: Bool {
    if case .inSession = self { return true }
    return false
  }

  /// Whether it gets a lock screen (idle timers, the sleep handshake wait for it).
  public var locks: Bool {
    switch self {
    case .virtualConsole, .terminal, .inSession: return true
    case .remote, .desktop, .cannot: return false
    }
  }
}
