import Glibc

/// Notices a file being removed from its directory: inotify on the directory
/// (IN_DELETE, IN_MOVED_FROM), filtered by name. A package upgrade renames a
/// new file over the old one, which is not a removal: only a name that is
/// gone once the events are read counts.
public struct RemovalWatch {
  /// Readable when events are pending (for the event loop).
  public let fd: Int32
  public let path: String

  /// nil when the directory cannot be watched (then removal is simply not noticed).
  public init?(path: String) {
    let directory = Executable.directory(of: path)
    let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard fd >= 0 else { return nil }
    guard inotify_add_watch(fd, directory, UInt32(IN_DELETE | IN_MOVED_FROM)) >= 0 else {
      close(fd)
      return nil
    }
    self.fd = fd
    self.path = path
  }

  /// Reads what is pending; true when the file is gone now.
  public func fileIsGone() -> Bool {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while read(fd, &buffer, buffer.count) > 0 {}  // the names do not matter: the file's presence does
    return access(path, F_OK) != 0 && errno == ENOENT
  }
}
