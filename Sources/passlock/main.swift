import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

// passlock: the command line. Parsing and help live in PasslockCore (CLI);
// the flows in Commands; everything that touches the store goes through
// passlock-auth.

signal(SIGPIPE, SIG_IGN)
// Every command here may hold a passcode, and the lock screen's verdict pipes.
keepOutOfSameUserReach()

let command: CLI.Command
do {
  command = try CLI.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  printError(CLI.usageError(error))
  exit(64)
}

func commands(stdin: Bool) -> Commands { Commands(input: PasscodeInput(standardInput: stdin)) }

do throws(CommandFailure) {
  let status: Int32
  switch command {
  case .help(let topic):
    printOut(CLI.help(topic))
    status = 0
  case .version:
    printOut("passlock \(CLI.version)\n")
    status = 0
  case .status(let json): status = try commands(stdin: false).status(json: json)
  case .verify(let stdin): status = try commands(stdin: stdin).verify()
  case .set(let allowSimple, let stdin): status = try commands(stdin: stdin).set(allowSimple: allowSimple)
  case .change(let allowSimple, let stdin, let forgot):
    status = try commands(stdin: stdin).change(allowSimple: allowSimple, forgot: forgot)
  case .remove(let stdin, let forgot): status = try commands(stdin: stdin).remove(forgot: forgot)
  case .reset(let stdin): status = try commands(stdin: stdin).reset()
  case .lockCheck: status = try commands(stdin: false).lockCheck()
  case .lockWayland(let readyFD, let record, let grace):
    try commands(stdin: false).lockWayland(readyFD: readyFD, record: record, graceMilliseconds: grace)
  case .lock(_, _, _, _, _, true, _): status = try commands(stdin: false).lockSessions()
  case .lock(let tty, let readyFD, let record, let ownVT, let leader, false, let grace):
    status = try commands(stdin: false).lock(
      tty: tty, readyFD: readyFD, record: record, ownVT: ownVT, leader: leader, graceMilliseconds: grace)
  case .config:
    do { printOut(try ConfigLoader.load().rendered()) } catch { throw .config("\(error)") }
    status = 0
  }
  exit(status)
} catch {
  // Ctrl-C at a prompt: the shell shows it; nothing more to say.
  if error != .interrupted { printError("Error: \(error.message)\n") }
  exit(error.exitStatus)
}
