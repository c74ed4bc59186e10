import CLinux
import Glibc

/// Ties a helper's life to its caller's.
public enum ParentDeath {
  /// Asks the kernel to send `signal` to this process when the thread that
  /// started it exits (prctl PR_SET_PDEATHSIG). False when the caller is
  /// already gone: the parent is read before and after, so no window is left
  /// in which its death would go unnoticed.
  public static func deliver(_ signal: Int32) -> Bool {
    let parent = getppid()
    guard passlock_set_parent_death_signal(signal) == 0 else { return getppid() == parent }
    return getppid() == parent
  }
}
