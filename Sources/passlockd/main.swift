import Dispatch
import Glibc
import PasslockBus
import PasslockClient
import PasslockCore
import PasslockPOSIX

// passlockd: the systemd user service. `--help`, `--version`; otherwise runs
// until stopped. Configuration errors exit 78 (EX_CONFIG) naming file:line.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--help"] || arguments == ["-h"] {
  printOut(
    """
    OVERVIEW: Lock your sessions with the passcode on suspend, idle and logind Lock.

    USAGE: passlockd

    Runs as a systemd user service (systemctl --user enable --now passlockd).
    Configuration: passlock.conf, sections [Lock], [Idle], [Console]; see 'passlock config'.

    """)
  exit(0)
}
if arguments == ["--version"] {
  printOut("passlockd \(CLI.version)\n")
  exit(0)
}
if !arguments.isEmpty {
  printError(CLI.usageError("Unexpected argument '\(arguments[0])'", usage: "passlockd", helpCommand: "passlockd --help"))
  exit(64)
}

signal(SIGPIPE, SIG_IGN)
// libdispatch tries to renice its worker thread to imitate a QoS class; an
// unprivileged user service may not (EACCES), and it logs "Failed to set
// thread priority for worker thread … errno=13" to the journal on every
// start, which reads as an error of ours. Its log is read once, lazily, so
// this must come before any Dispatch source. (It would also carry
// libdispatch's own assertion texts; a crash still shows in the journal as
// the exit signal.)
setenv("LIBDISPATCH_LOG", "NO", 1)

let config: Config
do {
  config = try ConfigLoader.load()
} catch {
  printError("<3>passlockd: \(error)\n")
  exit(78)
}

/// The overlay binary: PASSLOCK_BIN, else `passlock` beside this executable.
func overlayBinary() -> String {
  if let path = environment("PASSLOCK_BIN"), path.hasPrefix("/") { return path }
  return Executable.sibling("passlock")
}

/// The daemon, alive for the life of the process (dispatchMain never returns).
let daemon: Daemon = MainActor.assumeIsolated {
  do {
    let daemon = Daemon(config: config, bus: try Bus(), passlock: overlayBinary())
    try daemon.start()
    ControlSocket.start(daemon: daemon)
    return daemon
  } catch {
    Log.error("cannot start: \(error)")
    exit(1)
  }
}

withExtendedLifetime(daemon) { dispatchMain() }
