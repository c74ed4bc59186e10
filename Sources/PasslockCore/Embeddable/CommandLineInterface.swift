/// The `passlock` command line: parsing and help, in the style of
/// swift-argument-parser (help on stdout, exit 0; usage errors on stderr, exit 64).
public enum CLI {
  public static let version = "0.1.0"

  public enum Command: Equatable, Sendable {
    case help(topic: Subcommand?)
    case version
    case set(allowSimple: Bool, stdin: Bool)
    case change(allowSimple: Bool, stdin: Bool, forgot: Bool)
    case remove(stdin: Bool, forgot: Bool)
    case verify(stdin: Bool)
    case status(json: Bool)
    case reset(stdin: Bool)
    case lock(tty: String?, readyFD: Int32?, record: String?, ownVT: Bool, leader: Int32?, session: Bool, graceMilliseconds: Int32?)
    /// `lock --wayland`: the Wayland session, through passlock-wayland.
    case lockWayland(readyFD: Int32?, record: String?, graceMilliseconds: Int32?)
    /// `lock --check`: whether a lock screen could start, touching no terminal.
    case lockCheck
    case config
  }

  public enum Subcommand: String, CaseIterable, Sendable {
    case lock, set, change, remove, verify, status, reset, config

    var abstract: String {
      switch self {
      case .set: return "Choose a passcode of 4 to 16 digits."
      case .change: return "Change the passcode."
      case .remove: return "Remove the passcode."
      case .verify: return "Check a passcode (exit 0 match, 1 mismatch, 75 wait, 77 locked out)."
      case .status: return "Show the passcode, failed attempts, delays and where the store is."
      case .reset: return "Clear failed attempts after a lockout, with the account password."
      case .lock: return "Lock this terminal until the passcode is entered."
      case .config: return "Print the merged configuration; exit 1 on any error."
      }
    }

    /// Flags, and options that take a value (`value` names it).
    var options: [(flag: String, value: String?, help: String)] {
      let stdin = ("--stdin", nil as String?, "Read passcodes from standard input, one per line.")
      let simple = ("--allow-simple", nil as String?, "Accept an easy passcode (1111, 1234, 9876…).")
      let forgot = ("--forgot", nil as String?, "Use the account password instead of the current passcode.")
      switch self {
      case .set:
        return [simple, ("--stdin", nil, "Read the new passcode and its confirmation from standard input.")]
      case .change:
        return [
          simple, forgot, ("--stdin", nil, "Read the current, new and confirmation passcodes from standard input."),
        ]
      case .remove: return [forgot, stdin]
      case .verify: return [stdin]
      case .status: return [("--json", nil, "Print the status as one JSON object.")]
      case .reset: return [("--stdin", nil, "Read the account password from standard input.")]
      case .lock:
        return [
          ("--tty", "path", "Lock this terminal device instead of the current one."),
          ("--session", nil, "Ask passlockd (through logind) to lock all your sessions."),
          ("--ready-fd", "fd", "Write one byte to this descriptor once the lock screen is drawn."),
          ("--record", "path", "Remove this file after a real unlock (how passlockd learns how a lock it adopted ended)."),
          ("--own-vt", nil, "The terminal is a VT no session uses (passlock-vt's): no foreground job to stop."),
          ("--leader", "pid", "The session leader on that terminal (passlockd's, from logind): finds its foreground job at once."),
          ("--check", nil, "Only say whether a lock screen could start (a passcode is set); exit 0 if so."),
          ("--wayland", nil, "Lock this Wayland session instead (ext-session-lock-v1; runs passlock-wayland)."),
          (
            "--grace-ms", "ms",
            "Any input within this many milliseconds gives the session back without the passcode (passlockd's, after an idle lock)."
          ),
        ]
      case .config: return []
      }
    }

    var usage: String {
      "passlock \(rawValue)" + options.map { " [\($0.flag)\($0.value.map { " <\($0)>" } ?? "")]" }.joined()
    }
  }

  /// A command line that does not make sense; rendered by `usageError`.
  public struct UsageError: Error, Equatable {
    public var message: String
    public var subcommand: Subcommand?
  }

  public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
    guard let first = arguments.first else { return .help(topic: nil) }
    if first == "-h" || first == "--help" { return .help(topic: nil) }
    if first == "--version" { return .version }
    if first == "help" {
      guard arguments.count <= 2 else { throw UsageError(message: "Unexpected argument '\(arguments[2])'") }
      guard arguments.count == 2 else { return .help(topic: nil) }
      guard let topic = Subcommand(rawValue: arguments[1]) else {
        throw UsageError(message: "Unknown subcommand '\(arguments[1])'")
      }
      return .help(topic: topic)
    }
    guard let subcommand = Subcommand(rawValue: first) else {
      let kind = first.hasPrefix("-") ? "option" : "subcommand"
      throw UsageError(message: "Unknown \(kind) '\(first)'")
    }
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var rest = arguments.dropFirst()[...]
    while let argument = rest.popFirst() {
      if argument == "-h" || argument == "--help" { return .help(topic: subcommand) }
      guard let option = subcommand.options.first(where: { $0.flag == argument }) else {
        let kind = argument.hasPrefix("-") ? "Unknown option" : "Unexpected argument"
        throw UsageError(message: "\(kind) '\(argument)'", subcommand: subcommand)
      }
      if let name = option.value {
        guard let value = rest.popFirst() else {
          throw UsageError(message: "Missing value for '\(argument) <\(name)>'", subcommand: subcommand)
        }
        values[argument] = value
      } else {
        flags.insert(argument)
      }
    }
    let stdin = flags.contains("--stdin")
    let allowSimple = flags.contains("--allow-simple")
    switch subcommand {
    case .set: return .set(allowSimple: allowSimple, stdin: stdin)
    case .change: return .change(allowSimple: allowSimple, stdin: stdin, forgot: flags.contains("--forgot"))
    case .remove: return .remove(stdin: stdin, forgot: flags.contains("--forgot"))
    case .verify: return .verify(stdin: stdin)
    case .status: return .status(json: flags.contains("--json"))
    case .reset: return .reset(stdin: stdin)
    case .config: return .config
    case .lock:
      if flags.contains("--check") {
        guard flags == ["--check"], values.isEmpty else {
          throw UsageError(message: "'--check' cannot be combined with other options", subcommand: .lock)
        }
        return .lockCheck
      }
      /// A number option's value, when given: above `minimum`, or a usage error saying what was expected.
      func number(_ option: String, _ name: String, above minimum: Int32, expected: String) throws(UsageError) -> Int32? {
        guard let text = values[option] else { return nil }
        guard let value = Int32(text), value > minimum else {
          throw UsageError(message: "The value '\(text)' is invalid for '\(option) <\(name)>': expected \(expected)", subcommand: .lock)
        }
        return value
      }
      let readyFD = try number("--ready-fd", "fd", above: 2, expected: "a descriptor above 2")
      let grace = try number("--grace-ms", "ms", above: 0, expected: "a number of milliseconds")
      if flags.contains("--wayland") {
        // The compositor's lock has no terminal, job or VT to name.
        guard flags == ["--wayland"], Set(values.keys).isSubset(of: ["--ready-fd", "--record", "--grace-ms"]) else {
          throw UsageError(message: "'--wayland' goes with '--ready-fd', '--record' and '--grace-ms' only", subcommand: .lock)
        }
        return .lockWayland(readyFD: readyFD, record: values["--record"], graceMilliseconds: grace)
      }
      let leader = try number("--leader", "pid", above: 0, expected: "a process ID")
      return .lock(
        tty: values["--tty"], readyFD: readyFD, record: values["--record"], ownVT: flags.contains("--own-vt"), leader: leader,
        session: flags.contains("--session"), graceMilliseconds: grace)
    }
  }

  public static func help(_ topic: Subcommand?) -> String {
    guard let topic else {
      var out = """
        OVERVIEW: Lock your session with a short passcode.

        USAGE: passlock <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:

        """
      for sub in Subcommand.allCases { out += "  " + pad(sub.rawValue, 24) + sub.abstract + "\n" }
      out += "\n  See 'passlock help <subcommand>' for detailed help.\n"
      return out
    }
    var out = "OVERVIEW: \(topic.abstract)\n\nUSAGE: \(topic.usage)\n\nOPTIONS:\n"
    for option in topic.options {
      out += "  " + pad(option.flag + (option.value.map { " <\($0)>" } ?? ""), 24) + option.help + "\n"
    }
    out += "  " + pad("-h, --help", 24) + "Show help information.\n"
    return out
  }

  public static func usageError(_ error: UsageError) -> String {
    let usage = error.subcommand?.usage ?? "passlock <subcommand>"
    let helpCommand = error.subcommand.map { "passlock \($0.rawValue) --help" } ?? "passlock --help"
    return usageError(error.message, usage: usage, helpCommand: helpCommand)
  }

  /// The one usage-error format of every passlock program (exit 64).
  public static func usageError(_ message: String, usage: String, helpCommand: String) -> String {
    "Error: \(message)\nUsage: \(usage)\n  See '\(helpCommand)' for more information.\n"
  }

  static func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
  }
}
