import CLinux
import Glibc

/// From the first lock screen's start until the lock stands, the holder runs
/// as a real-time task. The lock screen starts its own gatekeeper right
/// after its frame, and on a busy machine (two cores here) the holder would
/// wait behind it: to hear of the frame, and between the switch and the lock
/// that follows it, long enough for a chvt in that gap to go through
/// (measured: 4 ms from frame to refused chvt instead of 2). The holder only
/// sleeps and makes a few system calls meanwhile. SCHED_RESET_ON_FORK:
/// nothing started from it inherits the priority.
enum SwitchPriority {
  /// sched.h's SCHED_RESET_ON_FORK (only declared with _GNU_SOURCE).
  static let resetOnFork: Int32 = 0x4000_0000

  /// (The caller's RLIMIT_RTTIME stays: a caller who sets it low can get the
  /// holder killed, as they can with SIGKILL; the console stays locked.)
  static func raise() {
    var parameters = sched_param(sched_priority: 1)
    _ = sched_setscheduler(0, SCHED_FIFO | resetOnFork, &parameters)
  }

  static func lower() {
    var parameters = sched_param(sched_priority: 0)
    _ = sched_setscheduler(0, SCHED_OTHER, &parameters)
  }
}
