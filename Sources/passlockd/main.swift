import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

// passlockd: the systemd user service. `--help`, `--version`; otherwise runs
// until stopped. Configuration errors exit 78 (EX_CONFIG) naming file:line.
// `--sleep-hook pre|post KIND` is the system sleep hook's work (SleepHook).

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
if arguments.first == "--sleep-hook" { SleepHook.run(Array(arguments.dropFirst())) }
if !arguments.isEmpty {
  printError(CLI.usageError("Unexpected argument '\(arguments[0])'", usage: "passlockd", helpCommand: "passlockd --help"))
  exit(64)
}

/// The lock screen program: PASSLOCK_BIN, else `passlock` beside this executable.
func lockScreenBinary() -> String {
  if let path = environment("PASSLOCK_BIN"), path.hasPrefix("/") { return path }
  return Executable.sibling("passlock")
}

/// Loads the configuration, starts the daemon and runs its loop for ever.
/// (A function, not top-level code: its state is its own.)
func runDaemon() -> Never {
  // SIGCHLD reaches the loop through the signal pipe.
  SignalPipe.install(ignoring: [SIGPIPE], watching: [SIGCHLD])
  // Any bus client can pass us descriptors; running out of them must not be
  // possible at 1024 (the read side closes what it drops at once, too).
  ResourceLimits.raiseOpenFileLimit()
  let config: Config
  do {
    config = try ConfigLoader.load()
  } catch {
    printError("<3>passlockd: \(error)\n")
    exit(78)
  }
  let loop = EventLoop()
  let daemon: Daemon
  do {
    daemon = Daemon(config: config, bus: try Bus(), passlock: lockScreenBinary(), loop: loop)
    try daemon.start()
    ControlSocket.start(daemon: daemon)
  } catch {
    Log.error("cannot start: \(error)")
    // The unit restarts us without a start limit (passlockd.service): a bus
    // that stays unreachable costs a start a second, not one every 100 ms.
    sleep(1)
    exit(1)
  }
  withExtendedLifetime(daemon) { loop.run() }
}

runDaemon()
