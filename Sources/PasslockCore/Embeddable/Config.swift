/// passlock's configuration: systemd-style `[Section]` / `Key=value` files,
/// merged in load order (later files override earlier ones key by key).
///
/// Every key is declared in `Config.schema`; an unknown section or key, a
/// malformed line or a bad value is an error that names `file:line`.
public struct Config: Equatable, Sendable {
  /// The merged values, by "Section.Key".
  public private(set) var values: [String: String]

  public init() {
    values = [:]
    for key in Config.schema { values[key.name] = key.defaultValue }
  }

  public subscript(_ name: String) -> String {
    guard let value = values[name] else { preconditionFailure("undeclared config key \(name)") }
    return value
  }

  /// One declared key: its section, name, default and accepted values.
  public struct Key: Sendable {
    public var section: String
    public var key: String
    public var defaultValue: String
    public var kind: Kind
    public var help: String
    public var name: String { "\(section).\(key)" }
  }

  public enum Kind: Sendable {
    case absolutePathOrEmpty
    case boolean
    case integer(ClosedRange<Int>)
    case choice([String])
    /// One character one column wide, or empty for the built-in glyph.
    case glyph
    /// Free text on one line.
    case text
  }

  /// Every key passlock reads, with what it means: the one description that
  /// passlock.conf(5) and the shipped config/passlock.conf are made from.
  public static let schema: [Key] = [
    Key(
      section: "Store", key: "SystemDirectory", defaultValue: "/var/lib/passlock", kind: .absolutePathOrEmpty,
      help:
        "Where the installed (setuid) passlock-auth keeps each user's passcode, one root-owned 0700 directory per user. Read from the root-owned file only."
    ),
    Key(
      section: "Authentication", key: "PAMConfigDirectory", defaultValue: "", kind: .absolutePathOrEmpty,
      help: "A directory of PAM service files to use instead of /etc/pam.d (empty: the system's). Useful for a staged install or tests."),
    Key(
      section: "Authentication", key: "PasswordAfterBoot", defaultValue: "no", kind: .boolean,
      help:
        "Password first, passcode after: after each boot the passcode is accepted nowhere (lock screens, passlock, pam_passlock) until the account password has been used once: at a passlock lock screen, 'passlock reset', or a login whose PAM stack runs as root (login, a display manager). Read from the root-owned file only."
    ),
    Key(
      section: "Authentication", key: "PasscodeOnlyWhileLocked", defaultValue: "no", kind: .boolean,
      help:
        "yes: a display manager's own PAM stack (gdm-password, sddm, lightdm, lxdm, xdm, greetd, ly) is offered the passcode only while logind says a session of the user's is locked (GDM's unlock dialog), never at the login screen. Read from the root-owned file only."
    ),
    Key(
      section: "Authentication", key: "PasswordEveryHours", defaultValue: "0", kind: .integer(0...8760),
      help:
        "Likewise when the account password was last used more than this many hours ago (0: never for that reason). Read from the root-owned file only."
    ),
    Key(
      section: "Appearance", key: "Language", defaultValue: "auto", kind: .choice(["auto", "en", "ja"]),
      help:
        "Texts on the lock screen: auto (from LC_ALL, LC_MESSAGES, LANG), en or ja. The Linux console has no Japanese font, so it always shows English."
    ),
    Key(
      section: "Appearance", key: "RevealLastDigit", defaultValue: "yes", kind: .boolean,
      help: "Show each typed digit for half a second before masking it."),
    Key(section: "Appearance", key: "Title", defaultValue: "", kind: .text, help: "Lock screen title (empty: \"Enter Passcode\")."),
    Key(
      section: "Appearance", key: "FilledGlyph", defaultValue: "", kind: .glyph,
      help: "Glyph of a typed digit (empty: ●, or • on the Linux console)."),
    Key(
      section: "Appearance", key: "EmptyGlyph", defaultValue: "", kind: .glyph,
      help: "Glyph of a digit still to type (empty: ○)."),
    Key(section: "Appearance", key: "TitleColor", defaultValue: "default", kind: .choice(Config.colors), help: "Colour of the title."),
    Key(section: "Appearance", key: "DotColor", defaultValue: "cyan", kind: .choice(Config.colors), help: "Colour of the dots."),
    Key(
      section: "Appearance", key: "ErrorColor", defaultValue: "red", kind: .choice(Config.colors),
      help: "Colour of wrong-passcode messages."),
    Key(section: "Appearance", key: "KeyColor", defaultValue: "default", kind: .choice(Config.colors), help: "Colour of the keypad."),
    Key(
      section: "Appearance", key: "StatusColor", defaultValue: "default", kind: .choice(Config.colors), help: "Colour of the status line."),
    Key(
      section: "External", key: "Enabled", defaultValue: "no", kind: .boolean,
      help: "Offer the external authenticator (PAM service passlock-external) beside the passcode."),
    Key(
      section: "External", key: "Kind", defaultValue: "fingerprint", kind: .choice(["fingerprint", "face", "security-key", "other"]),
      help: "What it is, for the key's label and messages."),
    Key(
      section: "External", key: "AutoStart", defaultValue: "yes", kind: .boolean,
      help: "Start it by itself once the lock screen is up (after ArmDelaySec); otherwise only on its key (click it, or press Space)."),
    Key(
      section: "External", key: "ArmDelaySec", defaultValue: "2", kind: .integer(0...60),
      help: "Seconds to wait before starting it by itself: the owner is still in front of the screen as it locks."),
    Key(
      section: "Lock", key: "OnStart", defaultValue: "no", kind: .boolean,
      help: "passlockd locks every session when it starts, as the originals locked at launch."),
    Key(
      section: "Lock", key: "UnlockOnLogindUnlock", defaultValue: "no", kind: .boolean,
      help:
        "logind's Unlock (loginctl unlock-session, or anything allowed to call UnlockSession) ends the lock without the passcode. Off by default: the passcode stays the only way in, whoever asks logind."
    ),
    Key(
      section: "Lock", key: "OverDesktop", defaultValue: "no", kind: .boolean,
      help:
        "GNOME Shell and KDE Plasma lock their sessions by themselves (on logind's Lock, before sleep, when idle), with lock screens that take the passcode once 'pam-auth-update --enable passlock' is on: passlockd leaves those sessions to them, so nobody unlocks twice. yes: passlock's lock on top of theirs too (then turn theirs off, e.g. GNOME's org.gnome.desktop.lockdown disable-lock-screen)."
    ),
    Key(
      section: "Idle", key: "LockAfterSec", defaultValue: "0", kind: .integer(0...86_400),
      help:
        "Lock a session after this many seconds without input (0: never). A TTY session's clock is its terminal's access time, which the kernel moves only when it enters another 8-second bucket: the lock comes up to 8 seconds late, never early. A session whose Wayland compositor passlockd finds is timed by the compositor (ext-idle-notify-v1: every input it sees, its idle inhibitors honoured); other graphical sessions follow logind's IdleHint."
    ),
    Key(
      section: "Idle", key: "GraceSec", defaultValue: "0", kind: .integer(0...60),
      help:
        "After an idle lock (never after sleep, logind's Lock, passlock lock or a lock screen that was restarted), a key or a click within this many seconds gives the session back without the passcode: no PAM call, nothing counted, no external authenticator started meanwhile; a suspend ends it (0: no grace)."
    ),
    Key(
      section: "Console", key: "Mode", defaultValue: "auto", kind: .choice(["auto", "vt", "direct"]),
      help:
        "How passlockd takes over a session's terminal: vt runs the setuid console holder passlock-vt, which locks the session on a VT of its own like physlock; direct runs 'passlock lock --tty' on the session's TTY (dedicated ttys, serial consoles); auto uses vt for sessions on a virtual console, direct for the others."
    ),
    Key(
      section: "Wayland", key: "Lock", defaultValue: "in-session", kind: .choice(["in-session", "vt"]),
      help:
        "How passlockd locks a session whose Wayland compositor it finds: in-session runs 'passlock lock --wayland' (ext-session-lock-v1: the session stays active, music and media keys go on), and locks on a VT instead when the compositor does not offer the protocol or refuses; vt always locks on a VT of its own."
    ),
  ]

  /// What a section's keys share, said once before them.
  public static let sectionNotes: [String: String] = [
    "Appearance":
      "Colours: default, black, red, green, yellow, blue, magenta, cyan, white, or bright- and one of those. NO_COLOR in the environment turns them all off.",
    "External":
      "The external authenticator, the Linux stand-in for Face ID / Touch ID: the PAM service passlock-external (see config/pam.d/passlock-external), run beside the passcode in its own process. Offered only when enabled here, when that service file exists and a passcode is set; not after boot until the passcode was entered once, not when the last passcode success is over 48 hours old, and not after 5 failures until the next passcode success.",
  ]

  /// Colour names: the eight ANSI colours, their bright forms, and default.
  public static let colors: [String] = {
    let base = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
    return ["default"] + base + base.map { "bright-" + $0 }
  }()

  /// Merges one file's text into the configuration.
  public mutating func merge(_ text: String, file: String) throws(ConfigError) {
    var section: String?
    for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let at = { (message: String) in ConfigError(file: file, line: index + 1, message: message) }
      let line = rawLine.trimmingSpaces()
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("[") {
        guard line.hasSuffix("]"), line.count > 2 else { throw at("a section header looks like [Name]") }
        let name = String(line.dropFirst().dropLast())
        guard Config.schema.contains(where: { $0.section == name }) else {
          throw at("unknown section [\(name)]; known: \(Config.sectionNames.joined(separator: ", "))")
        }
        section = name
        continue
      }
      guard let equals = line.firstIndex(of: "=") else { throw at("expected Key=value, found '\(line)'") }
      guard let section else { throw at("'\(line)' comes before any [Section]") }
      let key = line[..<equals].trimmingSpaces()
      let value = line[line.index(after: equals)...].trimmingSpaces()
      guard let declared = Config.schema.first(where: { $0.section == section && $0.key == key }) else {
        let known = Config.schema.filter { $0.section == section }.map({ $0.key }).joined(separator: ", ")
        throw at("unknown key '\(key)' in [\(section)]; known: \(known)")
      }
      if let problem = declared.kind.problem(with: value) { throw at("\(key)=\(value): \(problem)") }
      values[declared.name] = declared.kind.normalized(value)
    }
  }

  public static var sectionNames: [String] {
    var names: [String] = []
    for key in schema where !names.contains(key.section) { names.append(key.section) }
    return names
  }

  /// The merged configuration as a file, one section after another.
  public func rendered() -> String {
    var out = ""
    for section in Config.sectionNames {
      out += (out.isEmpty ? "" : "\n") + "[\(section)]\n"
      for key in Config.schema where key.section == section { out += "\(key.key)=\(self[key.name])\n" }
    }
    return out
  }

  public func bool(_ name: String) -> Bool { self[name] == "yes" }
  public func int(_ name: String) -> Int { Int(self[name])! }
}

extension Config.Kind {
  func problem(with value: String) -> String? {
    switch self {
    case .absolutePathOrEmpty:
      return value.isEmpty || value.hasPrefix("/") ? nil : "expected an absolute path"
    case .boolean:
      return Config.Kind.booleanWords[value.lowercased()] == nil ? "expected yes or no" : nil
    case .integer(let range):
      guard let number = Int(value), range.contains(number) else {
        return "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
      }
      return nil
    case .choice(let choices):
      return choices.contains(value) ? nil : "expected one of: \(choices.joined(separator: ", "))"
    case .glyph:
      return value.isEmpty || (value.unicodeScalars.count == 1 && TextWidth.of(value) == 1)
        ? nil : "expected one character one column wide"
    case .text:
      return nil
    }
  }

  func normalized(_ value: String) -> String {
    if case .boolean = self { return Config.Kind.booleanWords[value.lowercased()]! ? "yes" : "no" }
    return value
  }

  /// The spellings systemd accepts for booleans.
  static let booleanWords: [String: Bool] = [
    "yes": true, "true": true, "on": true, "1": true,
    "no": false, "false": false, "off": false, "0": false,
  ]
}

/// A configuration problem, located as `file:line: message`.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
  public var file: String
  public var line: Int
  public var message: String
  public init(file: String, line: Int, message: String) {
    self.file = file
    self.line = line
    self.message = message
  }
  public var description: String { "\(file):\(line): \(message)" }
}

extension StringProtocol {
  /// Without leading and trailing characters from `characters` (no Foundation here).
  public func trimming(_ characters: String) -> String {
    var s = Substring(self)
    while let c = s.first, characters.contains(c) { s.removeFirst() }
    while let c = s.last, characters.contains(c) { s.removeLast() }
    return String(s)
  }

  func trimmingSpaces() -> String { trimming(" \t\r") }
}
