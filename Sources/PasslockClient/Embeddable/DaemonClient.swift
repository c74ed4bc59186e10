import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Asks passlockd over its control socket ($XDG_RUNTIME_DIR/passlock/daemon.sock).
public enum DaemonClient {
  public static var socketPath: String? {
    environment("XDG_RUNTIME_DIR").flatMap { $0.hasPrefix("/") ? $0 + "/passlock/daemon.sock" : nil }
  }

  /// Sends one command line; the daemon's answer, or nil when it is not running.
  public static func request(_ command: String) -> String? {
    guard let path = socketPath, let address = UnixSocketAddress(path: path),
      let socket = try? UnixSocket.connect(address)
    else { return nil }
    defer { socket.close() }
    UnixSocket.setReceiveTimeout(socket, seconds: 5)
    guard (try? socket.writeAll(command + "\n")) != nil else { return nil }
    shutdown(socket.rawValue, Int32(SHUT_WR))
    return (try? socket.readAll()).map { String(decoding: $0, as: UTF8.self) }
  }
}
