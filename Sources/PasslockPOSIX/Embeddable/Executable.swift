import CLinux
import Glibc

/// Where this program and its companions are installed: the executables look
/// each other up beside themselves, never through the environment when it
/// matters (a setuid program trusts only its own location).
public enum Executable {
  /// This process's executable (readlink /proc/self/exe); nil if unreadable.
  public static var path: String? { Directory.linkTarget("/proc/self/exe") }

  /// `name` in the directory of `path` (default: this executable's).
  public static func sibling(_ name: String, of path: String? = Executable.path) -> String {
    directory(of: path ?? "./x") + "/" + name
  }

  /// The directory part of `path`; "/" for a file at the root.
  public static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }
}

/// mkdir -p: creates `path`'s missing components (mode `mode`), up to and
/// including the last one unless `parentsOnly`.
public func makeDirectories(_ path: String, mode: mode_t, parentsOnly: Bool = false) throws(SystemError) {
  var prefix = ""
  let components = path.split(separator: "/")
  for component in parentsOnly ? components.dropLast() : components[...] {
    prefix += "/" + component
    if mkdir(prefix, mode) != 0 && errno != EEXIST { throw SystemError("mkdir", path: prefix) }
  }
}

/// Sets close-on-exec on `fd`; false if it is not an open descriptor.
@discardableResult public func setCloseOnExec(_ fd: Int32) -> Bool { passlock_fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 }

/// pipe(2) with both ends close-on-exec (pipe2 is behind _GNU_SOURCE; these
/// programs spawn from one thread, so setting the flag right after leaks nothing).
public func closeOnExecPipe() throws(SystemError) -> (read: Int32, write: Int32) {
  var fds: [Int32] = [0, 0]
  guard pipe(&fds) == 0 else { throw SystemError("pipe") }
  for fd in fds { setCloseOnExec(fd) }
  return (fds[0], fds[1])
}
