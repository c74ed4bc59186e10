import CLinux
import Glibc

/// Ties a helper's life to its caller's.
public enum ParentDeath {
  /// Asks the kernel to send `signal` to this process when the thread that
  /// started it exits (prctl PR_SET_PDEATHSIG). False when the caller is
  /// already gone: its death before the call would go unnoticed otherwise, so
  /// `answers`, a pipe to the caller, is checked too (POLLERR once no one can
  /// read it), after the call. A caller that died between our exec and this
  /// point is seen either way.
  public static func deliver(_ signal: Int32, answers: Int32) -> Bool {
    let parent = getppid()
    // Where prctl fails (it does not on Linux), the pipe check still stands.
    _ = passlock_set_parent_death_signal(signal)
    var output = pollfd(fd: answers, events: 0, revents: 0)
    let readerGone = poll(&output, 1, 0) == 1 && output.revents & Int16(POLLERR) != 0
    return getppid() == parent && !readerGone
  }
}
