import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Finds whether a session's desktop locks it by itself (SelfLockingDesktop),
/// from evidence no other user can forge:
/// - the session's Desktop, which the display manager (root) set as it
///   opened the session (XDG_SESSION_DESKTOP) and no one changes afterwards;
/// - the desktop's locker (gnome-shell; kwin_wayland, or ksmserver on X11)
///   running as this user for that very session (its real uid, and
///   logind's GetSessionByPID; or, as Plasma 6 and GNOME start them as
///   systemd user services, outside every login while that session, a
///   graphical one, is the user's display session): only this user can run
///   processes as this user. A desktop that crashed (its process gone, or
///   dead and not yet reaped), or a session that only claims to be GNOME,
///   is locked by passlock as any other.
/// And whether its lock screen takes the passcode: its PAM service
/// (gdm-password, kde) includes common-auth, where the pam-auth-update
/// profile puts pam_passlock.so.
enum SelfLockingDesktops {
  /// The desktop that locks `session` by itself, or nil.
  /// `logins`: the user's sessions (a locker outside all of them is a user
  /// service's).
  static func desktop(of session: Logind.SessionInfo, logins: Set<String>, logind: Logind) -> SelfLockingDesktop? {
    guard !session.remote, let desktop = SelfLockingDesktop(desktop: session.desktop) else { return nil }
    let uid = getuid()
    var displaySession: String??
    for name in Directory.names("/proc") ?? [] {
      guard let pid = pid_t(name), pid > 0,
        let comm = SmallFile.read("/proc/\(pid)/comm", limit: 32)?.split(separator: "\n").first,
        desktop.lockers.contains(where: { comm == Substring($0) }), isRunning(pid, as: uid)
      else { continue }
      // A console login that logind elected display session (no graphical
      // one) is not drawn by a desktop outside it: only its own counts.
      let served =
        session.isGraphical
        ? logind.sessionServed(byProcess: pid, logins: logins, displaySession: &displaySession)
        : logind.sessionPath(ofProcess: pid)
      if served == session.path { return desktop }
    }
    return nil
  }

  /// The PAM directory (PASSLOCK_PAM_CONFIG_DIR for tests: what it changes is
  /// only what `passlock status` says).
  static var pamDirectory: String { environment("PASSLOCK_PAM_CONFIG_DIR") ?? "/etc/pam.d" }

  /// Whether pam_passlock.so is in the common-auth stack the desktops'
  /// lock screens include (an uncommented line naming it).
  static var passcodeOnTheirLockScreens: Bool {
    guard let text = SmallFile.read(pamDirectory + "/common-auth", limit: 1 << 16) else { return false }
    return text.split(separator: "\n").contains { line in
      let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      return words.first?.hasPrefix("#") == false && words.contains { $0.hasSuffix("pam_passlock.so") }
    }
  }

  /// What `passlock status` says of a session left to the desktop `name`.
  static func statusNote(_ name: String) -> String {
    "left to \(name)'s own lock screen, "
      + (passcodeOnTheirLockScreens
        ? "which takes the passcode (pam_passlock in common-auth)"
        : "which takes the passcode once 'sudo pam-auth-update --enable passlock' adds it")
      + " (Lock.OverDesktop=yes puts passlock's lock on top)"
  }
}
