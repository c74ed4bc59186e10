import CLinux
import Glibc

/// An AF_UNIX socket address: a file system path, or an abstract name (no
/// file; D-Bus and NOTIFY_SOCKET may use one). The one place that fills a
/// sockaddr_un.
public struct UnixSocketAddress {
  private var storage = sockaddr_un()
  private let length: socklen_t

  /// nil when the name does not fit sun_path.
  public init?(path: String) { self.init(bytes: Array(path.utf8), abstract: false) }

  public init?(abstract name: String) { self.init(bytes: [0] + Array(name.utf8), abstract: true) }

  private init?(bytes: [UInt8], abstract: Bool) {
    // A path needs its terminating NUL inside sun_path too.
    guard bytes.count > (abstract ? 1 : 0), bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else { return nil }
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
      for (i, byte) in bytes.enumerated() { raw[i] = byte }
    }
    length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
  }

  /// Runs `body` (bind, connect, sendto) with the address and its length.
  public func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
  }
}
