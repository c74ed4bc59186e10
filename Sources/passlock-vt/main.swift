import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

// passlock-vt: the console holder, installed setuid root, like physlock.
//
//   passlock-vt --vt N [--ready-fd M] [--grace-ms MS]   lock the console of VT N (yours, or any as root);
//                                       an idle lock's grace goes to the first lock screen only
//   passlock-vt --release               root: undo a lock whose holder was killed
//
// Root is used for the VT ioctls, the kernel knobs and the lock VT's owner;
// the lock screen itself runs as the caller. Unlocks only when it exits 0.

let arguments = Array(CommandLine.arguments.dropFirst())

// The lock screen runs without TZ (LockScreenRunner's environment), and so
// does the clock the holder paints in its place.
unsetenv("TZ")
// An ignored SIGCHLD survives exec: with it the kernel reaps our lock screens
// itself and waitpid reports no status at all. Take the default back.
Glibc.signal(SIGCHLD, SIG_DFL)

func fail(_ error: HolderError) -> Never {
  if case .usage(let message) = error {
    printError(
      CLI.usageError(message, usage: "passlock-vt --vt N [--ready-fd FD] [--grace-ms MS] | --release", helpCommand: "passlock-vt --help"))
    exit(ConsoleHolder.Exit.usage.rawValue)
  }
  printError("passlock-vt: \(error)\n")
  exit(error.exitStatus.rawValue)
}

if arguments == ["--help"] {
  printOut("USAGE: passlock-vt --vt N [--ready-fd FD] [--grace-ms MS]\n       passlock-vt --release   (root)\n")
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
nonisolated(unsafe) var currentLockScreen: pid_t = 0
// passlockd sends SIGUSR1 after resume: the lock screen draws itself again.
Glibc.signal(SIGUSR1) { _ in if currentLockScreen > 0 { _ = kill(currentLockScreen, SIGUSR1) } }

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
  var graceMilliseconds: Int32?
  var rest = arguments[...]
  while let argument = rest.popFirst() {
    switch argument {
    case "--vt": sessionVT = rest.popFirst().flatMap { Int32($0) }.flatMap { $0 > 0 && $0 < 64 ? $0 : nil }
    case "--ready-fd": readyFD = rest.popFirst().flatMap { Int32($0) }.flatMap { $0 > 2 ? $0 : nil }
    case "--grace-ms":
      guard let value = rest.popFirst().flatMap({ Int32($0) }), value > 0 else { fail(.usage("--grace-ms takes a number of milliseconds")) }
      graceMilliseconds = value
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
  guard access(LockScreenRunner.lockScreenPath(), X_OK) == 0 else {
    fail(.refused("the lock screen \(LockScreenRunner.lockScreenPath()) is missing; refusing to lock"))
  }
  // Nor one nothing could unlock: once switching is locked, only the
  // gatekeeper's own refusal would give it back.
  let gatekeeperPath = GatekeeperClient.locate(trustingEnvironment: getuid() == 0).path
  guard access(gatekeeperPath, X_OK) == 0 else {
    fail(.refused("the gatekeeper \(gatekeeperPath) is missing; refusing to lock"))
  }

  // The holder must outlive memory pressure, and must not die with a terminal.
  SmallFile.write("/proc/self/oom_score_adj", "-1000")
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
  // The lock screen's raw mode before the VT is on screen: a key typed at it
  // neither echoes nor waits for Enter, and the first lock screen keeps it
  // (it was typed at the lock). Then the VT cleared, and the first frame,
  // when the holder can know it (FirstFrame), painted right after the
  // switch and before the lock screen starts (so the two never write at
  // once). Over a killed holder's lock the lock screen starts before the
  // switch: the frame is painted now, before it. The order from here is
  // ConsoleLockSequence's.
  _ = LockTerminal.makeRaw(prepared.fd)
  let frame = FirstFrame.prepare(on: prepared.fd, for: caller)
  if prepared.stale != nil, let frame { FirstFrame.paint(frame, on: prepared.fd) }
  ConsoleLockRun(
    console: console, prepared: prepared, caller: caller, checkedSession: checkedSession, sessionVT: sessionVT,
    readyFD: readyFD, graceMilliseconds: graceMilliseconds, frameOnceLocked: prepared.stale == nil ? frame : nil
  ).run(painted: frame != nil)
}

holdConsole()
