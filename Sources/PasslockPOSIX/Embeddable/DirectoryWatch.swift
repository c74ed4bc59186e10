import Glibc

/// Names coming and going in a directory, through inotify: a non-blocking
/// descriptor the event loop polls, and the names of what happened.
public struct DirectoryWatch {
  /// Readable when events are pending (for the event loop).
  public let fd: Int32

  /// nil when the directory cannot be watched (then nothing is noticed).
  /// `events`: inotify's mask (IN_CREATE, IN_DELETE…).
  public init?(directory: String, events: Int32) {
    let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard fd >= 0 else { return nil }
    guard inotify_add_watch(fd, directory, UInt32(events)) >= 0 else {
      close(fd)
      return nil
    }
    self.fd = fd
  }

  /// What happened since the last call (the pending events, read whole):
  /// the names, and whether the kernel's queue overflowed (events, names
  /// with them, were lost: anything may have changed).
  public func changes() -> (names: [String], overflowed: Bool) {
    var names: [String] = []
    var overflowed = false
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = retryingInterrupts { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
      guard count > 0 else { return (names, overflowed) }
      // struct inotify_event: wd, mask, cookie, len (4 bytes each), then
      // len bytes of name, NUL-padded.
      var offset = 0
      while offset + 16 <= count {
        let (mask, length) = buffer.withUnsafeBytes {
          (
            $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
            Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
          )
        }
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
        let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
        if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
        offset += 16 + length
      }
    }
  }
}
