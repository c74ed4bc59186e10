import CWaylandClient
import Glibc

// passlock-wayland: the lock screen of a Wayland session, through the
// compositor's ext-session-lock-v1 (`passlock lock --wayland` runs it). The
// same passcode screen, texts and gatekeeper as the terminal lock screen; a
// program of its own because it links libwayland, xkbcommon and cairo.
//   passlock-wayland [--ready-fd <fd>] [--record <path>] [--grace-ms <ms>]
// Exit: 0 unlocked; 3 another lock screen holds the lock; 69 no lock in
// this session (no compositor, or no ext-session-lock-v1); 129 the
// compositor went away; otherwise `passlock lock`'s statuses.

signal(SIGPIPE, SIG_IGN)
// It holds a passcode, and the pipes whose verdict unlocks.
keepOutOfSameUserReach()

let usage = "passlock-wayland [--ready-fd <fd>] [--record <path>] [--grace-ms <ms>]"
let help = """
  OVERVIEW: Lock this Wayland session until the passcode is entered (ext-session-lock-v1).

  USAGE: \(usage)

  OPTIONS:
    --ready-fd <fd>         Write one byte to this descriptor once the compositor has locked the session and shown the lock screen on every output (at most 1 s after it locked: an output that is off shows nothing).
    --record <path>         Remove this file after a real unlock (passlockd's lock record).
    --grace-ms <ms>         Any input within this many milliseconds gives the session back (passlockd's, after an idle lock).
    --version               Show the version.
    -h, --help              Show help information.

  """

func usageError(_ message: String) -> Never {
  printError(CLI.usageError(message, usage: usage, helpCommand: "passlock-wayland --help"))
  exit(64)
}

/// The command line: `--ready-fd`, `--record`, `--grace-ms`.
func parseOptions() -> (readyFD: Int32?, record: String?, grace: Int32?) {
  var options: (readyFD: Int32?, record: String?, grace: Int32?) = (nil, nil, nil)
  var arguments = CommandLine.arguments.dropFirst()[...]
  while let argument = arguments.popFirst() {
    switch argument {
    case "-h", "--help":
      printOut(help)
      exit(0)
    case "--version":
      printOut("passlock-wayland \(CLI.version)\n")
      exit(0)
    case "--ready-fd":
      guard let text = arguments.popFirst() else { usageError("Missing value for '--ready-fd <fd>'") }
      guard let fd = Int32(text), fd > 2 else {
        usageError("The value '\(text)' is invalid for '--ready-fd <fd>': expected a descriptor above 2")
      }
      options.readyFD = fd
    case "--record":
      guard let path = arguments.popFirst() else { usageError("Missing value for '--record <path>'") }
      options.record = path
    case "--grace-ms":
      guard let text = arguments.popFirst() else { usageError("Missing value for '--grace-ms <ms>'") }
      guard let milliseconds = Int32(text), milliseconds > 0 else {
        usageError("The value '\(text)' is invalid for '--grace-ms <ms>': expected a number of milliseconds")
      }
      options.grace = milliseconds
    default:
      usageError("\(argument.hasPrefix("-") ? "Unknown option" : "Unexpected argument") '\(argument)'")
    }
  }
  return options
}

/// Locks the session; returns after a real unlock. `record`: passlockd's
/// lock record, so passlockd keeps this lock (it may be one a killed lock
/// screen left with the compositor) and every status reading locks.
func lockSession(readyFD: Int32?, record: String?, graceMilliseconds: Int32?) throws(CommandFailure) {
  // Checked before anything else: kept from the gatekeepers this starts.
  if let readyFD, !setCloseOnExec(readyFD) {
    throw .refused("--ready-fd \(readyFD) is not an open descriptor; nothing was locked")
  }
  guard
    let displayName = [environment("WAYLAND_DISPLAY"), environment("WAYLAND_SOCKET").map({ "WAYLAND_SOCKET=\($0)" })].compactMap({ $0 })
      .first(where: { !$0.isEmpty })
  else {
    throw .noSessionLock("WAYLAND_DISPLAY is not set: this is not a Wayland session; 'passlock lock' locks a terminal")
  }
  let gatekeeper = GatekeeperClient.locate()
  // The cached status, or the gatekeeper's answer started now: it comes
  // while we load cairo and connect to the compositor.
  let unlock = try UnlockStatus.begin(gatekeeper: gatekeeper)
  // Everything it draws with, before anything is locked (DrawingLibrary).
  let lib = try DrawingLibrary.load()
  let config: Config
  do { config = try ConfigLoader.load() } catch {
    // A typo in the config must never keep a screen from locking.
    printError("Warning: \(error); using the default appearance\n")
    config = Config()
  }
  let appearance = LockAppearance(configuredBy: config)
  let renderer = appearance.renderer(linuxConsole: false)
  // No terminal to lose: a hangup or Ctrl-C where it was started does not
  // end the lock; SIGTERM may (the compositor keeps the session locked).
  SignalPipe.install(ignoring: [SIGINT, SIGQUIT, SIGTSTP, SIGTTOU, SIGTTIN, SIGHUP], watching: [SIGUSR1])
  guard let display = wl_display_connect(nil) else {
    let runtime = environment("XDG_RUNTIME_DIR") ?? "$XDG_RUNTIME_DIR"
    throw .noSessionLock("cannot connect to the Wayland compositor at \(runtime)/\(displayName): \(String(cString: strerror(errno)))")
  }
  defer { wl_display_disconnect(display) }
  let session = WaylandLock(
    display: display, renderer: renderer, lib: lib, readyFD: readyFD.map { FileDescriptor(rawValue: $0) })
  do throws(WaylandLock.Failure) {
    try session.connect(displayName: displayName)
    // Nothing is locked when the gatekeeper says no passcode is set; no
    // answer at all locks, with the status asked again (StatusReading).
    let first: StatusReading
    do { first = try unlock.first(alreadyLocked: record != nil) } catch { throw .refused(error) }
    let screen = LockScreen(reading: first, revealLastDigit: renderer.theme.revealLastDigit, now: LockController.now())
    let controller = LockController(
      gatekeeper: gatekeeper, screen: screen,
      context: LockRenderer.Context(clock: wallClockText(), userAtHost: userAtHost(first.status?.user ?? environment("USER") ?? "")),
      texts: renderer.texts, terminal: nil, external: appearance.external)
    defer { controller.end() }
    if unlock.awaitsAnswer(after: first) { controller.awaitStatus(failures: first.isUnknown ? 1 : 0) }
    if let graceMilliseconds { controller.beginGrace(milliseconds: Int64(graceMilliseconds)) }
    // Offered only when configured, its PAM service exists and the store
    // allows it now; from a cached status, armed only once confirmed.
    if let status = first.status, status.externalRefusal.isEmpty { controller.offerExternal() }
    try session.lock(controller: controller)
  } catch {
    switch error {
    case .refused(let failure): throw failure
    case .connectionLost:
      printError("Error: the connection to the Wayland compositor broke; nothing was unlocked.\n")
      exit(WaylandLockExit.compositorGone.rawValue)
    }
  }
}

let options = parseOptions()
do throws(CommandFailure) {
  try lockSession(readyFD: options.readyFD, record: options.record, graceMilliseconds: options.grace)
  // A daemon that adopted this lock screen reads the unlock from the record's absence.
  if let record = options.record { unlink(record) }
  exit(0)
} catch {
  printError("Error: \(error.message)\n")
  exit(error.exitStatus)
}
