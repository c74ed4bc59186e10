/// How the lock screen looks for a configuration and the environment's
/// language and color choice: what the lock screen draws with, and what the
/// console holder paints its first frame with, so the two are the same.
public struct LockAppearance: Sendable {
  public let theme: Theme
  public let texts: Texts
  public let color: Bool
  /// The external authenticator's key, when `[External] Enabled=yes`.
  public let external: ExternalSettings?

  /// `locale`: LC_ALL, LC_MESSAGES or LANG, the first set; `noColor`: NO_COLOR set and not empty.
  public init(config: Config, locale: String?, noColor: Bool) {
    theme = Theme(config: config)
    let language = config["Appearance.Language"]
    texts = Texts(language == "auto" ? .from(locale: locale) : Texts.Language(rawValue: language)!)
    color = !noColor
    external =
      config.bool("External.Enabled")
      ? ExternalSettings(
        label: ExternalSettings.label(config["External.Kind"]), autoStart: config.bool("External.AutoStart"),
        armDelayMilliseconds: Int64(config.int("External.ArmDelaySec")) * 1000)
      : nil
  }

  public func renderer(linuxConsole: Bool) -> LockRenderer {
    LockRenderer(theme: theme, texts: texts, capabilities: .init(linuxConsole: linuxConsole, color: color))
  }
}

/// The `[External]` settings the lock screen acts on.
public struct ExternalSettings: Sendable {
  public var label: String
  public var autoStart: Bool
  public var armDelayMilliseconds: Int64

  /// The keypad key's label (five columns at most).
  public static func label(_ kind: String) -> String {
    switch kind {
    case "fingerprint": return "Touch"
    case "face": return "Face"
    case "security-key": return "Key"
    default: return "Other"
    }
  }
}
