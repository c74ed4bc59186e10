import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Finds the Wayland compositor that draws a logind session, without
/// trusting an environment that may be stale (WAYLAND_DISPLAY in the user
/// manager is whatever was last imported): each `wayland-*` socket in our
/// runtime directory is connected to, the kernel names the process at the
/// other end (SO_PEERCRED), and logind says which session that process is in
/// (GetSessionByPID).
///
/// A compositor run as a systemd user service (uwsm, a user's own unit)
/// is in no login session: logind puts it in none, or in the user
/// manager's own `manager` session (systemd 256+). It counts as drawing
/// the user's display session (logind's User.Display), as libseat
/// attributes it when it asks logind for its seat.
///
/// Locking the wrong compositor would leave the screen usable while
/// LockedHint says locked, so only the one that shows the session counts:
/// in a `wayland` session the one holding a display device (`/dev/dri/card*`),
/// or the only one there; in a `tty` session (a compositor started from a
/// console login) only one holding a display device, never a headless or
/// nested one beside the shell on screen; in any other (an X11 session
/// running a nested compositor) none.
enum WaylandCompositors {
  /// The display name ("wayland-1") of the compositor showing `session`,
  /// or nil when there is none (or it cannot be told).
  /// `logins`: the paths of the user's login sessions (passlockd's tracked
  /// ones); a compositor in none of them is a user service's.
  static func display(of session: Logind.SessionInfo, logins: Set<String>, logind: Logind) -> String? {
    guard session.type == "wayland" || session.type == "tty" else { return nil }
    let candidates = inSession(session.path, logins: logins, logind: logind)
    let drawing = candidates.filter { holdsDisplayDevice($0.pid) }
    if drawing.count == 1 { return drawing[0].display }
    if drawing.isEmpty, candidates.count == 1, session.type == "wayland" { return candidates[0].display }
    return nil
  }

  /// The compositors listening in our runtime directory whose process is
  /// in session `path`, or outside every login when `path` is the user's
  /// display session.
  private static func inSession(_ path: String, logins: Set<String>, logind: Logind) -> [(display: String, pid: pid_t)] {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return [] }
    // Asked once, and only if a compositor outside every login turns up.
    var displaySession: String??
    var found: [(display: String, pid: pid_t)] = []
    for name in Directory.names(runtime) ?? [] where isSocketName(name) {
      // Non-blocking: a stopped compositor's full backlog must not stall the daemon.
      guard let address = UnixSocketAddress(path: runtime + "/" + name),
        let socket = try? UnixSocket.connect(address, nonBlocking: true)
      else { continue }
      defer { socket.close() }
      guard let peer = try? PeerCredentials.of(socket.rawValue), peer.uid == getuid() else { continue }
      if logind.sessionServed(byProcess: peer.pid, logins: logins, displaySession: &displaySession) == path {
        found.append((name, peer.pid))
      }
    }
    return found
  }

  /// A compositor's socket ("wayland-1"), not its lock file.
  static func isSocketName(_ name: String) -> Bool { name.hasPrefix("wayland-") && !name.hasSuffix(".lock") }

  /// Whether `pid` holds a DRM primary node open: it drives a display.
  private static func holdsDisplayDevice(_ pid: pid_t) -> Bool {
    let fds = "/proc/\(pid)/fd"
    return (Directory.names(fds) ?? []).contains { Directory.linkTarget(fds + "/" + $0)?.hasPrefix("/dev/dri/card") == true }
  }
}
