import CLinux
import Glibc

/// Notices a file being removed from its directory (IN_DELETE,
/// IN_MOVED_FROM on the directory). A package upgrade renames a new file
/// over the old one, which is not a removal: only a name that is gone once
/// the events are read counts.
public struct RemovalWatch {
  private let watch: DirectoryWatch
  /// Readable when events are pending (for the event loop).
  public var fd: Int32 { watch.fd }
  public let path: String

  /// nil when the directory cannot be watched (then removal is simply not noticed).
  public init?(path: String) {
    guard let watch = DirectoryWatch(directory: Executable.directory(of: path), events: Int32(IN_DELETE | IN_MOVED_FROM)) else {
      return nil
    }
    self.watch = watch
    self.path = path
  }

  /// Reads what is pending; true when the file is gone now.
  public func fileIsGone() -> Bool {
    _ = watch.changes()  // the names do not matter: the file's presence does
    return access(path, F_OK) != 0 && errno == ENOENT
  }
}
