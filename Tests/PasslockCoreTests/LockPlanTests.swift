import PasslockCore
import Testing

/// Where a session's lock method is chosen (LockPlan): the console, the
/// session's own terminal or in-session, by session type, seat and
/// compositor.
@Suite struct LockPlanTests {
  static func session(_ type: String, tty: String, vt: UInt32, remote: Bool = false) -> LogindSession {
    LogindSession(id: "c1", path: "/org/freedesktop/login1/session/c1", tty: tty, remote: remote, vtNumber: vt, type: type)
  }

  /// Session (type, TTY, VTNr, remote), Console.Mode, whether its TTY opens → the plan.
  @Test(
    arguments: [
      (session("tty", tty: "/dev/tty3", vt: 3), "auto", true, LockPlan.virtualConsole(3)),
      (session("tty", tty: "/dev/tty3", vt: 3), "vt", true, .virtualConsole(3)),
      (session("tty", tty: "/dev/tty3", vt: 3), "direct", true, .terminal("/dev/tty3")),
      (session("tty", tty: "/dev/ttyS0", vt: 0), "auto", true, .terminal("/dev/ttyS0")),
      (session("tty", tty: "/dev/pts/1", vt: 0), "auto", true, .terminal("/dev/pts/1")),
      (session("tty", tty: "/dev/pts/1", vt: 2), "auto", true, .terminal("/dev/pts/1")),
      (session("tty", tty: "/dev/pts/9", vt: 0), "auto", false, .cannot("/dev/pts/9 cannot be opened by this user")),
      (session("x11", tty: "", vt: 7), "auto", true, .virtualConsole(7)),
      (session("wayland", tty: "", vt: 2), "vt", true, .virtualConsole(2)),
      (session("x11", tty: "", vt: 0), "auto", true, .cannot("a x11 session without a VT (or Console.Mode=direct)")),
      (session("wayland", tty: "", vt: 2), "direct", true, .cannot("a wayland session without a VT (or Console.Mode=direct)")),
      (session("unspecified", tty: "", vt: 0), "auto", true, .cannot("it has no TTY")),
      (session("tty", tty: "/dev/pts/0", vt: 0, remote: true), "auto", true, .remote),
      (session("x11", tty: "", vt: 7, remote: true), "auto", true, .remote),
    ] as [(LogindSession, String, Bool, LockPlan)])
  func theSessionDecidesTheLock(_ session: LogindSession, _ mode: String, _ opens: Bool, _ plan: LockPlan) {
    #expect(LockPlan(session, consoleMode: mode, canOpen: { _ in opens }) == plan)
  }

  /// With another user's session on the seat the console holder refuses
  /// (exit 4): a console login is locked on its own terminal instead.
  @Test func aSharedSeatLocksEachConsoleOnItsOwnTerminal() {
    #expect(
      LockPlan(Self.session("tty", tty: "/dev/tty3", vt: 3), consoleMode: "auto", seatShared: true, canOpen: { _ in true })
        == .terminal("/dev/tty3"))
    #expect(
      LockPlan(Self.session("x11", tty: "", vt: 7), consoleMode: "auto", seatShared: true, canOpen: { _ in true })
        == .cannot("another user has a session on this seat, and a x11 session has no terminal of its own to lock"))
  }

  /// A console lock covers whatever is on screen: a session in the
  /// background is locked on its own terminal, or not at all without one.
  @Test func aSessionInTheBackgroundIsLockedOnItsOwnTerminal() {
    let open = { (_: String) in true }
    #expect(
      LockPlan(Self.session("tty", tty: "/dev/tty1", vt: 1), consoleMode: "auto", onScreen: false, canOpen: open) == .terminal("/dev/tty1"))
    #expect(
      LockPlan(Self.session("tty", tty: "/dev/tty1", vt: 1), consoleMode: "auto", onScreen: true, canOpen: open) == .virtualConsole(1))
    #expect(
      LockPlan(Self.session("wayland", tty: "", vt: 2), consoleMode: "auto", onScreen: false, canOpen: open)
        == .cannot("a wayland session in the background has no terminal of its own to lock"))
  }

  /// A desktop found locking the session by itself keeps it (no second
  /// lock on top, whatever else would lock it), unless Lock.OverDesktop;
  /// a remote session stays alone.
  @Test func aSelfLockingDesktopKeepsItsSession() {
    let open = { (_: String) in true }
    let gnome = Self.session("wayland", tty: "", vt: 2)
    #expect(
      LockPlan(gnome, consoleMode: "auto", compositor: "wayland-0", selfLocking: .gnomeShell, canOpen: open)
        == .desktop("GNOME Shell"))
    #expect(LockPlan(gnome, consoleMode: "auto", selfLocking: .gnomeShell, canOpen: open).locks == false)
    #expect(
      LockPlan(gnome, consoleMode: "auto", selfLocking: .gnomeShell, overDesktop: true, canOpen: open) == .virtualConsole(2))
    #expect(LockPlan(gnome, consoleMode: "auto", canOpen: open) == .virtualConsole(2), "no desktop found: passlock locks")
    #expect(
      LockPlan(Self.session("x11", tty: "", vt: 7, remote: true), consoleMode: "auto", selfLocking: .kdePlasma, canOpen: open)
        == .remote)
  }

  /// The sessions' Desktop names (XDG_SESSION_DESKTOP, as GDM and SDDM set
  /// it) that mean a desktop locking by itself, and which process holds it.
  @Test func theDesktopsThatLockByThemselves() {
    for name in ["gnome", "GNOME", "gnome-xorg", "ubuntu", "gnome-classic"] {
      #expect(SelfLockingDesktop(desktop: name) == .gnomeShell, "\(name)")
    }
    for name in ["KDE", "plasma", "plasmawayland", "plasmax11"] {
      #expect(SelfLockingDesktop(desktop: name) == .kdePlasma, "\(name)")
    }
    for name in ["", "sway", "labwc", "xfce", "wayfire", "Hyprland", "gnome-shell-nested"] {
      #expect(SelfLockingDesktop(desktop: name) == nil, "\(name)")
    }
    #expect(SelfLockingDesktop.gnomeShell.lockers == ["gnome-shell"])
    #expect(SelfLockingDesktop.kdePlasma.lockers == ["kwin_wayland", "ksmserver"])
  }

  /// A compositor found in the session locks it in-session, whatever the
  /// session's type (one started from a console login keeps "tty"), its place
  /// on screen or the seat; `[Wayland] Lock = vt`, or a remote session, not.
  @Test func aCompositorInTheSessionLocksItInSession() {
    let open = { (_: String) in true }
    let wayland = Self.session("wayland", tty: "", vt: 2)
    let console = Self.session("tty", tty: "/dev/tty1", vt: 1)
    #expect(LockPlan(wayland, consoleMode: "auto", compositor: "wayland-1", canOpen: open) == .inSession(display: "wayland-1"))
    #expect(LockPlan(console, consoleMode: "auto", compositor: "wayland-0", canOpen: open) == .inSession(display: "wayland-0"))
    #expect(
      LockPlan(wayland, consoleMode: "auto", seatShared: true, onScreen: false, compositor: "wayland-1", canOpen: open)
        == .inSession(display: "wayland-1"))
    #expect(
      LockPlan(Self.session("wayland", tty: "", vt: 0), consoleMode: "auto", compositor: "wayland-1", canOpen: open)
        == .inSession(display: "wayland-1"))
    #expect(LockPlan(wayland, consoleMode: "auto", compositor: "wayland-1", waylandLock: "vt", canOpen: open) == .virtualConsole(2))
    #expect(LockPlan(console, consoleMode: "auto", compositor: nil, canOpen: open) == .virtualConsole(1))
    #expect(
      LockPlan(Self.session("wayland", tty: "", vt: 2, remote: true), consoleMode: "auto", compositor: "wayland-1", canOpen: open)
        == .remote)
  }

  @Test func vtTerminalAndInSessionPlansGetALockScreen() {
    #expect(LockPlan.virtualConsole(2).locks && LockPlan.terminal("/dev/pts/1").locks)
    #expect(LockPlan.inSession(display: "wayland-1").locks && LockPlan.inSession(display: "wayland-1").isInSession)
    #expect(!LockPlan.remote.locks && !LockPlan.cannot("x").locks && !LockPlan.virtualConsole(2).isInSession)
  }
}
