/// A desktop that locks its sessions by itself: it takes logind's Lock,
/// locks before sleep and when idle with its own lock screen, and sets
/// LockedHint (GNOME Shell's screenShield.js, KDE Plasma's kscreenlocker,
/// ksldapp.cpp: inside KWin on Wayland, inside ksmserver on X11). Neither compositor offers ext-session-lock-v1,
/// so passlock's own lock there would be a VT lock on top of theirs.
/// Their lock screens take the passcode through PAM (gdm-password and kde
/// include common-auth: `pam-auth-update --enable passlock`).
public struct SelfLockingDesktop: Equatable, Sendable {
  /// What the log and `passlock status` call it.
  public var name: String
  /// The processes (their 15-character comm) that hold the desktop's
  /// lock: one must run for the session as its user, or nothing would
  /// lock it.
  public var lockers: [String]

  public static let gnomeShell = SelfLockingDesktop(name: "GNOME Shell", lockers: ["gnome-shell"])
  /// KWin hosts the screen locker on Wayland (WaylandServer::initScreenLocker),
  /// ksmserver on X11.
  public static let kdePlasma = SelfLockingDesktop(name: "KDE Plasma", lockers: ["kwin_wayland", "ksmserver"])

  /// The desktop a session's Desktop property names (XDG_SESSION_DESKTOP,
  /// as GDM and SDDM set it from the session's file), when it locks by
  /// itself; nil for any other (sway, labwc, Xfce, a console login).
  public init?(desktop: String) {
    switch desktop.lowercased() {
    case "gnome", "gnome-xorg", "gnome-wayland", "gnome-classic", "gnome-classic-xorg", "ubuntu", "ubuntu-xorg",
      "ubuntu-wayland":
      self = .gnomeShell
    case "kde", "plasma", "plasmawayland", "plasmax11", "kde-plasma":
      self = .kdePlasma
    default:
      return nil
    }
  }

  public init(name: String, lockers: [String]) {
    self.name = name
    self.lockers = lockers
  }
}
