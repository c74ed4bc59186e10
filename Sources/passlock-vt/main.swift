import Glibc
import PasslockClient
import PasslockCore
import PasslockPOSIX

// passlock-vt: the console holder, installed setuid root, like physlock.
//
//   passlock-vt --vt N [--ready-fd M]   lock the console of VT N (yours, or any as root)
//   passlock-vt --release               root: undo a lock whose holder was killed
//
// Root is used for the VT ioctls, the kernel knobs and the lock VT's owner;
// the lock screen itself runs as the caller. Unlocks only when it exits 0.

let arguments = Array(CommandLine.arguments.dropFirst())

// The lock screen runs without TZ (OverlayRunner's environment), and so
// does the clock the holder paints in its place.
unsetenv("TZ")
// An ignored SIGCHLD survives exec: with it the kernel reaps our lock screens
// itself and waitpid reports no status at all. Take the default back.
Glibc.signal(SIGCHLD, SIG_DFL)

func fail(_ error: HolderError) -> Never {
  if case .usage(let message) = error {
    printError(CLI.usageError(message, usage: "passlock-vt --vt N [--ready-fd FD] | --release", helpCommand: "passlock-vt --help"))
    exit(ConsoleHolder.Exit.usage.rawValue)
  }
  printError("passlock-vt: \(error)\n")
  exit(error.exitStatus.rawValue)
}

if arguments == ["--help"] {
  printOut("USAGE: passlock-vt --vt N [--ready-fd FD]\n       passlock-vt --release   (root)\n")
  exit(0)
}
if arguments == ["--version"] {
  printOut("passlock-vt \(CLI.version)\n")
  exit(0)
}
if arguments == ["--release"] {
  guard getuid() == 0 else { fail(.refused("--release is for root: it unlocks a console without the passcode")) }
  do { try Holder.release() } catch { fail(error) }
  exit(0)
}

/// The running lock screen, for the SIGUSR1 handler (written after each
/// spawn, read in the handler: a plain aligned word).
nonisolated(unsafe) var currentOverlay: pid_t = 0
// passlockd sends SIGUSR1 after resume: the lock screen draws itself again.
Glibc.signal(SIGUSR1) { _ in if currentOverlay > 0 { _ = kill(currentOverlay, SIGUSR1) } }

/// Why a console lock would shut another user out of their session (see
/// ActiveSession), or nil when the caller has seat0 to themselves.
func sharedSeat(_ caller: uid_t) -> HolderError? {
  let others = ActiveSession.othersOnSeat(besides: caller)
  guard !others.isEmpty else { return nil }
  let list = others.map { "\($0.id) (uid \($0.uid)\($0.vt > 0 ? ", VT \($0.vt)" : ""))" }.joined(separator: ", ")
  return .sharedSeat(
    "another user has a session on this seat (\(list)); locking the console would shut them out, refusing to lock")
}

/// Parses the arguments, locks the console and holds it until a lock screen
/// exits 0. (A function, not top-level code: its state is its own.)
func holdConsole() -> Never {
  var sessionVT: Int32?
  var readyFD: Int32?
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--vt": sessionVT = rest.popFirst().flatMap { Int32($0) }.flatMap { $0 > 0 && $0 < 64 ? $0 : nil }
    case "--ready-fd": readyFD = rest.popFirst().flatMap { Int32($0) }.flatMap { $0 > 2 ? $0 : nil }
    default: fail(.usage("Unexpected argument '\(argument)'"))
    }
  }
  guard let sessionVT else { fail(.usage("Missing '--vt N'")) }
  // Checked before anything is opened (a number not open would be taken by
  // the console's descriptor), and kept from every child.
  if let readyFD, !setCloseOnExec(readyFD) {
    fail(.usage("--ready-fd \(readyFD) is not an open descriptor"))
  }

  let caller = getuid()
  /// The logind session the lock is for (non-root callers).
  var checkedSession: ActiveSession?
  var tty = stat()
  guard stat("/dev/tty\(sessionVT)", &tty) == 0 else { fail(.refused("/dev/tty\(sessionVT) does not exist")) }
  // Only for the user whose session logind has on screen, on that session's VT
  // (or root): never a lock screen of one user over another user's console.
  if caller != 0 {
    switch ActiveSession.lookUp() {
    case .noLogind:
      fail(.refused("systemd-logind does not run, so nothing says whose session is on screen; only root may lock the console"))
    case .noActiveSession:
      fail(.refused("logind has no active session on seat0; refusing to lock"))
    case .active(let session):
      guard session.uid == caller else {
        fail(.refused("the session on screen (\(session.id)) is not yours; refusing to lock over it"))
      }
      guard session.vt == sessionVT else {
        fail(.refused("your active session \(session.id) is on VT \(session.vt), not VT \(sessionVT); refusing to lock"))
      }
      checkedSession = session
    }
    if let problem = sharedSeat(caller) { fail(problem) }
  }
  // Pre-flight, before the console is touched: never lock a console that only
  // root could open again. Whether a passcode is set and the gatekeeper
  // answers is the holder's own status check's to say (below).
  guard access(OverlayRunner.overlayPath(), X_OK) == 0 else {
    fail(.refused("the lock screen \(OverlayRunner.overlayPath()) is missing; refusing to lock"))
  }

  // The holder must outlive memory pressure, and must not die with a terminal.
  KernelKnobs.write("/proc/self/oom_score_adj", "-1000")
  for signal in [SIGINT, SIGQUIT, SIGTSTP, SIGTERM, SIGHUP, SIGTTOU, SIGTTIN, SIGPIPE] { Glibc.signal(signal, SIG_IGN) }

  let console: Console
  let prepared: Holder.Prepared
  do {
    console = try Console()
    // A user may lock only what is on screen and theirs: never put their lock
    // screen over someone else's session.
    if caller != 0 && console.active() != sessionVT {
      fail(.refused("VT \(sessionVT) is not the one on screen (VT \(console.active()) is); refusing to lock over it"))
    }
    prepared = try Holder.prepare(console: console, user: caller)
  } catch {
    fail(error)
  }
  // The lock VT comes on screen with the holder's frame on it, or as soon as
  // the first lock screen runs, before it draws: the session is hidden a lock
  // screen's start-up sooner (physlock too switches first). The lock
  // stands only once that frame is up and the holder's own status check says
  // a passcode is set (the lock screen may draw from a cached status). If not,
  // the console is given back at once, before the daemon hears of a lock:
  // what refusing to lock would have done, and nothing typed reaches either
  // answer. Over a lock that a killed holder left, both come first: giving
  // back would undo that lock too.
  // The lock screen's raw mode before the VT is on screen: a key typed at it
  // neither echoes nor waits for Enter, and the first lock screen keeps it
  // (it was typed at the lock). Then the first frame, painted before the
  // lock screen starts (so the two never write at once), when the holder
  // can know it (FirstFrame).
  _ = LockTerminal.makeRaw(prepared.fd)
  let painted = FirstFrame.paint(on: prepared.fd, for: caller)
  // With the holder's frame on the VT, the lock screen is not on the way to
  // it: it starts once switching is locked, not beside a display server that
  // is giving up its VT (on two cores its start-up held X's answer up by a
  // millisecond). Without that frame, or over a stale lock (whose checks come
  // before the lock), it starts now.
  var first: (pid: pid_t, ready: Int32)?
  let startsOnceLocked = painted && prepared.stale == nil
  if !startsOnceLocked {
    do { first = try startOverlay(on: prepared.tty) } catch {
      prepared.abandon(console)
      fail(error)
    }
  }
  SwitchPriority.raise()
  // Asked once the console is locked: started before, the gatekeeper would
  // hold up the switch (posix_spawn waits for its exec) and compete with the
  // lock screen's start. The lock's 30 ms settle watch covers its answer.
  // (Over a stale lock its own check, used up before the lock, is not this:
  // a used-up request must not be cancelled, its child is reaped.)
  var check: StatusCheck?
  /// Why the console cannot stay locked (the first lock screen then no
  /// longer runs), or nil once its frame is up and a passcode is set.
  func lockScreenProblem(_ first: (pid: pid_t, ready: Int32), _ check: StatusCheck) -> String? {
    let deadline = monotonicSeconds() + lockStandsWithin
    switch waitForFrame(first.ready, by: deadline) {
    case .drawn: break
    case .exited:
      let status = reapLockScreen(first.pid) ?? -1
      return check.refusal(by: deadline) ?? "it exited with status \(exitCode(fromWaitStatus: status))"
    case .late:
      stopLockScreen(first.pid)
      return check.refusal(by: deadline) ?? "it drew nothing within \(Int(lockStandsWithin)) s"
    }
    guard let problem = check.refusal(by: deadline) else { return nil }
    stopLockScreen(first.pid)
    return problem
  }
  if prepared.stale != nil {
    guard let first else {
      prepared.abandon(console)
      fail(.refused("the lock screen did not start; refusing to lock"))
    }
    if let problem = lockScreenProblem(first, StatusCheck()) {
      prepared.abandon(console)
      fail(.refused("the lock screen cannot start: \(problem); refusing to lock"))
    }
  }
  // Opened before the lock: a switch right after it is seen, not missed.
  let switches = SwitchWatch()
  let holder: Holder
  var lateStart: HolderError?
  do {
    holder = try Holder.lock(prepared, console: console, user: caller) {
      // Two spawns, each waiting for its child's exec, before the settle
      // watch: a raced switch is taken back that much later (SwitchWatch
      // still sees it).
      if startsOnceLocked {
        do throws(HolderError) { first = try startOverlay(on: prepared.tty) } catch { lateStart = error }
      }
      if prepared.stale == nil && lateStart == nil { check = StatusCheck() }
    }
  } catch {
    check?.cancel()
    if let first { stopLockScreen(first.pid) }
    prepared.abandon(console)  // once nothing has the VT open, it can be freed
    fail(error)
  }
  let lockFD = prepared.fd
  guard let first else {
    check?.cancel()
    holder.end(closing: lockFD)
    fail(lateStart ?? .refused("the lock screen did not start; refusing to lock"))
  }
  // The caller can stop this process (it is their real uid) between the checks
  // above and the lock: now that switching is locked, check again that the VT
  // we switched away from is theirs and their session still the same one.
  if let session = checkedSession {
    var problem: HolderError?
    if holder.originalVT != sessionVT || ActiveSession.session(session.id) != session {
      problem = .refused("the session on screen changed while locking; refusing to lock")
    } else {
      problem = sharedSeat(caller)
    }
    if let problem {
      check?.cancel()
      stopLockScreen(first.pid)
      holder.end(closing: lockFD)
      fail(problem)
    }
  }
  // (`check` is set without a stale lock: Holder.lock runs `whenLocked` before it returns.)
  if prepared.stale == nil, let problem = lockScreenProblem(first, check!) {
    holder.end(closing: lockFD)
    fail(.refused("the lock screen cannot start: \(problem); refusing to lock"))
  }
  SwitchPriority.lower()
  // The first frame is on screen now: the daemon may let the machine sleep.
  if let readyFD {
    var byte: UInt8 = 1
    _ = write(readyFD, &byte, 1)
    close(readyFD)
  }

  /// Runs lock screens until one exits 0; restarts the others with the
  /// restart backoff, and when they keep failing says so on the lock VT.
  var backoff = RestartBackoff()
  var running: pid_t? = first.pid
  while true {
    let started = time(nil)
    let pid: pid_t
    if let first = running {
      pid = first
      running = nil
    } else {
      // Keys left from the lock screen that ended, or typed at the emergency
      // text, are not the next one's passcode.
      tcflush(lockFD, TCIFLUSH)
      do {
        let overlay = try startOverlay(on: holder.lockTTY)
        pid = overlay.pid
        // Only the first lock screen's frame is reported; a later one that
        // hangs before it is supervised all the same.
        _ = waitForFrame(overlay.ready, by: monotonicSeconds() + lockStandsWithin)
      } catch {
        holder.emergency(lockFD)
        sleep(5)
        continue
      }
    }
    // Only an exit 0 that waitpid saw unlocks; a wait that fails is a failure.
    let status = (switches.map { $0.supervise(pid, holder: holder) } ?? reapLockScreen(pid)) ?? -1
    if status == 0 {
      holder.end(closing: lockFD)
      exit(0)
    }
    let delay = backoff.failed(afterRunning: Double(time(nil) - started))
    if backoff.keepsFailing {
      holder.emergency(lockFD)
      sleep(30)
    } else if delay > 0 {
      usleep(UInt32(delay * 1000))
    }
  }
}

holdConsole()
