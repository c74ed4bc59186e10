import CLinux
import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// `passlockd --sleep-hook pre|post KIND`: the wait before sleep, run as
/// root after logind announced the sleep and before the kernel sleeps: by
/// passlock-sleep.service before sleep.target (KIND `sleep-target`), and by
/// systemd-sleep as the system sleep hook (systemd/system-sleep/passlock
/// execs it).
///
/// Each user's passlockd normally holds a logind delay inhibitor until its
/// lock screens are up; logind grants one only through polkit, and a
/// minimal Debian has none. So this waits, for at most 5 s (logind's own
/// InhibitDelayMaxSec default), until every running passlockd says its
/// sessions are locked for this sleep (`sleep-ready` in its runtime
/// directory, written by SleepHandshake's `letSleep` and removed at wake).
///
/// It runs as root over files other users control, so it opens nothing of
/// theirs: the daemons are found in /proc (a process whose executable is
/// this very program, owned by the runtime directory's owner), and
/// `sleep-ready` is only looked at (fstatat, no link followed) in a
/// directory opened without following links and checked to be theirs. A
/// FIFO, a link to a device, a huge file or thousands of users can make
/// the wait last at most the bound.
enum SleepHook {
  /// The whole hook's bound, the scan of /proc included.
  static let boundMilliseconds: UInt64 = 5_000

  /// The same wait runs twice for one sleep: first as passlock-sleep.service
  /// (`pre sleep-target`, before sleep.target: systemd 256 on freezes the
  /// users' processes before it runs the hooks), then as the system-sleep
  /// hook. The unit leaves its deadline here (root's /run: no user can
  /// write it), so the hook shares the one 5 s bound instead of adding its
  /// own; the hook's `post` removes it.
  static let sharedDeadline = "/run/passlock-sleep-deadline"

  static func run(_ arguments: [String]) -> Never {
    if arguments.first == "post" { unlink(sharedDeadline) }
    guard arguments.first == "pre" else { exit(0) }
    let now = monotonicNanoseconds()
    var deadline = now + boundMilliseconds * 1_000_000
    if arguments.dropFirst().first == "sleep-target" {
      if let fd = try? FileDescriptor.open(sharedDeadline, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600) {
        try? fd.writeAll("\(deadline)\n")
        fd.close()
      }
    } else if let text = SmallFile.read(sharedDeadline), let earlier = UInt64(text.split(separator: "\n").first ?? ""),
      earlier <= deadline, earlier + 30_000_000_000 > now
    {
      // The unit waited for this sleep: what it waited for is up, or it
      // said which daemon did not report. Only the rest of its bound is left.
      guard earlier > now else { exit(0) }
      deadline = earlier
    }
    // A backstop for what no deadline check can bound: a call that blocks
    // (a user's FUSE file system over their runtime directory, where
    // fuse.conf allows others in) ends with the process at the bound's end,
    // the shared one's included (at least 2 s: alarm(0) would cancel it).
    alarm(UInt32((deadline - now + 999_999_999) / 1_000_000_000) + 1)
    var waiting = daemons(until: deadline)
    while !waiting.isEmpty {
      waiting.removeAll { daemon in daemon.isReady || !daemon.isRunning }
      guard !waiting.isEmpty else { break }
      if monotonicNanoseconds() >= deadline {
        for daemon in waiting {
          printError(
            "passlock: passlockd \(daemon.pid) (uid \(daemon.uid)) did not report its lock screens up within 5 s; sleeping anyway\n")
        }
        break
      }
      usleep(10_000)
    }
    exit(0)
  }

  /// One user's running passlockd (the first found of theirs: one per user
  /// is looked at, so that a user running many cannot use up the hook's
  /// descriptors), and its runtime directory, opened.
  struct Daemon {
    let pid: pid_t
    let uid: uid_t
    /// $XDG_RUNTIME_DIR/passlock, O_PATH: only looked into, never read.
    let directory: Int32

    /// `sleep-ready` exists (whatever it is: nothing of it is opened).
    var isReady: Bool {
      var st = stat()
      return fstatat(directory, "sleep-ready", &st, AT_SYMLINK_NOFOLLOW) == 0
    }

    var isRunning: Bool { kill(pid, 0) == 0 }
  }

  /// Every passlockd that runs now: a process whose executable is this
  /// program (or was, before an upgrade replaced it), with its owner's
  /// runtime directory. Stops looking at `deadline`.
  static func daemons(until deadline: UInt64) -> [Daemon] {
    guard let me = Executable.path else { return [] }
    var found: [Daemon] = []
    var users: Set<uid_t> = []
    for name in Directory.names("/proc") ?? [] {
      guard monotonicNanoseconds() < deadline else { break }
      guard let pid = pid_t(name), pid > 0, pid != getpid(),
        let exe = Directory.linkTarget("/proc/\(pid)/exe"), exe == me || exe == me + " (deleted)",
        let uid = realUID(ofProcess: pid), uid != 0, !users.contains(uid), let directory = runtimeDirectory(of: uid)
      else { continue }
      users.insert(uid)
      found.append(Daemon(pid: pid, uid: uid, directory: directory))
    }
    return found
  }

  /// /run/user/UID/passlock, opened without following a link at either
  /// step, only when both are directories of `uid`'s (logind makes the
  /// first; the user controls what is inside it).
  static func runtimeDirectory(of uid: uid_t) -> Int32? {
    // O_PATH (glibc names it __O_PATH outside _GNU_SOURCE): the directory
    // is only named, never read; no device or FIFO is ever opened.
    let flags = __O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    let runtime = passlock_open("/run/user/\(uid)", flags, 0)
    guard runtime >= 0 else { return nil }
    defer { close(runtime) }
    let directory = passlock_openat(runtime, "passlock", flags, 0)
    guard directory >= 0 else { return nil }
    var outer = stat()
    var inner = stat()
    guard fstat(runtime, &outer) == 0, outer.st_uid == uid, fstat(directory, &inner) == 0, inner.st_uid == uid else {
      close(directory)
      return nil
    }
    return directory
  }
}
