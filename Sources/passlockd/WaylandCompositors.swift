import Glibc
import PasslockPOSIX

/// Finds the Wayland compositor of a logind session without trusting an
/// environment that may be stale (WAYLAND_DISPLAY in the user manager is
/// whatever was last imported): each `wayland-*` socket in our runtime
/// directory is connected to, the kernel names the process at the other end
/// (SO_PEERCRED), and logind says which session that process is in
/// (GetSessionByPID).
enum WaylandCompositors {
  /// The display name ("wayland-1") of the compositor running in session
  /// `path`, or nil when none does.
  static func display(ofSession path: String, logind: Logind) -> String? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    for name in (Directory.names(runtime) ?? []).sorted() where name.hasPrefix("wayland-") && !name.hasSuffix(".lock") {
      guard let address = UnixSocketAddress(path: runtime + "/" + name), let socket = try? UnixSocket.connect(address) else {
        continue
      }
      defer { socket.close() }
      guard let peer = try? PeerCredentials.of(socket.rawValue), peer.uid == getuid() else { continue }
      if logind.sessionPath(ofProcess: peer.pid) == path { return name }
    }
    return nil
  }
}
