import Glibc
import PasslockPOSIX

/// Asks passlockd over its control socket ($XDG_RUNTIME_DIR/passlock/daemon.sock).
public enum DaemonClient {
  public static var socketPath: String? {
    environment("XDG_RUNTIME_DIR").flatMap { $0.hasPrefix("/") ? $0 + "/passlock/daemon.sock" : nil }
  }

  /// Sends one command line; the daemon's answer, or nil when it is not running.
  public static func request(_ command: String) -> String? {
    guard let path = socketPath, path.utf8.count < 100 else { return nil }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    setCloseOnExec(fd)
    guard let address = UnixSocketAddress(path: path), address.withSockaddr({ connect(fd, $0, $1) }) == 0 else { return nil }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let descriptor = FileDescriptor(rawValue: fd)
    guard (try? descriptor.writeAll(command + "\n")) != nil else { return nil }
    shutdown(fd, Int32(SHUT_WR))
    return (try? descriptor.readAll()).map { String(decoding: $0, as: UTF8.self) }
  }
}
