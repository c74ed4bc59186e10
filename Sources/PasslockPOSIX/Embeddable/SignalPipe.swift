import CLinux
import Glibc

/// Signals turned into bytes on a pipe (the self-pipe trick), so the lock
/// screen's poll loop sees them as input like any other.
public enum SignalPipe {
  /// Written only by the handler, read only by the poll loop.
  nonisolated(unsafe) static var writeEnd: Int32 = -1
  public private(set) nonisolated(unsafe) static var readEnd: Int32 = -1

  /// Ignores the signals a locked screen must survive and routes `watched` to the pipe.
  public static func install(ignoring ignored: [Int32], watching watched: [Int32]) {
    for signal in ignored { Glibc.signal(signal, SIG_IGN) }
    guard let fds = try? closeOnExecPipe() else { return }
    for fd in [fds.read, fds.write] { _ = passlock_fcntl(fd, F_SETFL, passlock_fcntl(fd, F_GETFL, 0) | O_NONBLOCK) }
    readEnd = fds.read
    writeEnd = fds.write
    for signal in watched {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { number in
        var byte = UInt8(truncatingIfNeeded: number)
        _ = Glibc.write(SignalPipe.writeEnd, &byte, 1)
      }
      action.sa_flags = SA_RESTART
      sigaction(signal, &action, nil)
    }
    // A parent's blocked mask is inherited across exec (a daemon's worker
    // thread, a test runner): unblock what we watch, or a hangup goes unseen.
    var set = sigset_t()
    sigemptyset(&set)
    for signal in watched { sigaddset(&set, signal) }
    sigprocmask(SIG_UNBLOCK, &set, nil)
  }

  /// The signals received since the last call.
  public static func drain() -> [Int32] {
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = Glibc.read(readEnd, &buffer, buffer.count)
    return n > 0 ? buffer[..<n].map { Int32($0) } : []
  }
}
