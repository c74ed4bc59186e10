import PasslockCore
import Testing

/// `passlock`'s command line: every subcommand parses, usage errors are
/// shown with the usage, and the help texts.
@Suite struct CommandLineTests {
  static let parses: [([String], CLI.Command)] = [
    ([], .help(topic: nil)),
    (["--help"], .help(topic: nil)),
    (["help", "set"], .help(topic: .set)),
    (["set", "-h"], .help(topic: .set)),
    (["--version"], .version),
    (["set"], .set(allowSimple: false, stdin: false)),
    (["set", "--stdin", "--allow-simple"], .set(allowSimple: true, stdin: true)),
    (["change", "--stdin"], .change(allowSimple: false, stdin: true, forgot: false)),
    (["change", "--forgot"], .change(allowSimple: false, stdin: false, forgot: true)),
    (["remove", "--forgot", "--stdin"], .remove(stdin: true, forgot: true)),
    (["lock"], .lock(tty: nil, readyFD: nil, record: nil, ownVT: false, leader: nil, session: false, graceMilliseconds: nil)),
    (
      ["lock", "--tty", "/dev/pts/3", "--ready-fd", "5"],
      .lock(tty: "/dev/pts/3", readyFD: 5, record: nil, ownVT: false, leader: nil, session: false, graceMilliseconds: nil)
    ),
    (
      ["lock", "--tty", "/dev/pts/3", "--record", "/run/user/1000/passlock/locked/3"],
      .lock(
        tty: "/dev/pts/3", readyFD: nil, record: "/run/user/1000/passlock/locked/3", ownVT: false, leader: nil, session: false,
        graceMilliseconds: nil)
    ),
    (["lock", "--session"], .lock(tty: nil, readyFD: nil, record: nil, ownVT: false, leader: nil, session: true, graceMilliseconds: nil)),
    (
      ["lock", "--tty", "/dev/tty9", "--own-vt"],
      .lock(tty: "/dev/tty9", readyFD: nil, record: nil, ownVT: true, leader: nil, session: false, graceMilliseconds: nil)
    ),
    (["lock", "--check"], .lockCheck),
    (["lock", "--wayland"], .lockWayland(readyFD: nil, record: nil, graceMilliseconds: nil)),
    (
      ["lock", "--wayland", "--ready-fd", "3", "--record", "/run/user/1000/passlock/locked/c2"],
      .lockWayland(readyFD: 3, record: "/run/user/1000/passlock/locked/c2", graceMilliseconds: nil)
    ),
    (
      ["lock", "--tty", "/dev/tty9", "--own-vt", "--grace-ms", "5000"],
      .lock(tty: "/dev/tty9", readyFD: nil, record: nil, ownVT: true, leader: nil, session: false, graceMilliseconds: 5000)
    ),
    (["lock", "--wayland", "--grace-ms", "1"], .lockWayland(readyFD: nil, record: nil, graceMilliseconds: 1)),
    (["config"], .config),
    (["remove"], .remove(stdin: false, forgot: false)),
    (["verify", "--stdin"], .verify(stdin: true)),
    (["status", "--json"], .status(json: true)),
    (["reset"], .reset(stdin: false)),
  ]

  @Test(arguments: parses)
  func parse(_ arguments: [String], _ expected: CLI.Command) throws {
    #expect(try CLI.parse(arguments) == expected)
  }

  static let usageErrors: [([String], String)] = [
    (["lock-it"], "Error: Unknown subcommand 'lock-it'\nUsage: passlock <subcommand>\n  See 'passlock --help' for more information.\n"),
    (["--verbose"], "Error: Unknown option '--verbose'\nUsage: passlock <subcommand>\n  See 'passlock --help' for more information.\n"),
    (
      ["status", "--stdin"],
      "Error: Unknown option '--stdin'\nUsage: passlock status [--json]\n  See 'passlock status --help' for more information.\n"
    ),
    (
      ["verify", "1234"],
      "Error: Unexpected argument '1234'\nUsage: passlock verify [--stdin]\n  See 'passlock verify --help' for more information.\n"
    ),
    (
      ["lock", "--check", "--session"],
      "Error: '--check' cannot be combined with other options\nUsage: passlock lock [--tty <path>] [--session] [--ready-fd <fd>] [--record <path>] [--own-vt] [--leader <pid>] [--check] [--wayland] [--grace-ms <ms>]\n  See 'passlock lock --help' for more information.\n"
    ),
    (
      ["lock", "--wayland", "--tty", "/dev/tty3"],
      "Error: '--wayland' goes with '--ready-fd', '--record' and '--grace-ms' only\nUsage: passlock lock [--tty <path>] [--session] [--ready-fd <fd>] [--record <path>] [--own-vt] [--leader <pid>] [--check] [--wayland] [--grace-ms <ms>]\n  See 'passlock lock --help' for more information.\n"
    ),
    (
      ["lock", "--tty"],
      "Error: Missing value for '--tty <path>'\nUsage: passlock lock [--tty <path>] [--session] [--ready-fd <fd>] [--record <path>] [--own-vt] [--leader <pid>] [--check] [--wayland] [--grace-ms <ms>]\n  See 'passlock lock --help' for more information.\n"
    ),
    (
      ["lock", "--ready-fd", "1"],
      "Error: The value '1' is invalid for '--ready-fd <fd>': expected a descriptor above 2\nUsage: passlock lock [--tty <path>] [--session] [--ready-fd <fd>] [--record <path>] [--own-vt] [--leader <pid>] [--check] [--wayland] [--grace-ms <ms>]\n  See 'passlock lock --help' for more information.\n"
    ),
  ]

  @Test(arguments: usageErrors)
  func usageErrorsAreRenderedWithUsage(_ arguments: [String], _ expected: String) {
    do {
      _ = try CLI.parse(arguments)
      Issue.record("parsed \(arguments)")
    } catch {
      #expect(CLI.usageError(error) == expected)
    }
  }

  @Test func topLevelHelp() {
    #expect(
      CLI.help(nil) == """
        OVERVIEW: Lock your session with a short passcode.

        USAGE: passlock <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          lock                    Lock this terminal until the passcode is entered.
          set                     Choose a passcode of 4 to 16 digits.
          change                  Change the passcode.
          remove                  Remove the passcode.
          verify                  Check a passcode (exit 0 match, 1 mismatch, 75 wait, 77 locked out).
          status                  Show the passcode, failed attempts, delays and where the store is.
          reset                   Clear failed attempts after a lockout, with the account password.
          config                  Print the merged configuration; exit 1 on any error.

          See 'passlock help <subcommand>' for detailed help.

        """)
  }

  @Test func subcommandHelp() {
    #expect(
      CLI.help(.set) == """
        OVERVIEW: Choose a passcode of 4 to 16 digits.

        USAGE: passlock set [--allow-simple] [--stdin]

        OPTIONS:
          --allow-simple          Accept an easy passcode (1111, 1234, 9876…).
          --stdin                 Read the new passcode and its confirmation from standard input.
          -h, --help              Show help information.

        """)
  }
}
