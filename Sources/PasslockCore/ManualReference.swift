/// The parts of the man pages that other tables already say: the config keys
/// (from `Config.schema`) for passlock.conf(5) and the subcommands and options
/// (from `CLI.Subcommand`) for passlock(1), rendered as scdoc fragments so the
/// pages cannot drift from the code. `passlock-docs` prints them at build time.
public enum ManualReference {
  /// Every section and key with its default, accepted values and meaning.
  public static func configKeys() -> String {
    var out = ""
    for section in Config.sectionNames {
      out += "## [\(section)]\n\n"
      if let note = Config.sectionNotes[section] { out += escaped(note) + "\n\n" }
      for key in Config.schema where key.section == section {
        let shown = key.defaultValue.isEmpty ? "(empty)" : key.defaultValue
        out += "*\(key.key)=*\n\n"
        out += "\t\(escaped(key.help)) Accepted: \(escaped(accepted(key.kind))). Default: \(escaped(shown)).\n\n"
      }
    }
    return out
  }

  /// Every subcommand with its usage line, summary and options.
  public static func commands() -> String {
    var out = ""
    for sub in CLI.Subcommand.allCases {
      out += "*\(escaped(sub.usage))*\n\n\t\(escaped(sub.abstract))\n\n"
      for option in sub.options {
        let value = option.value.map { " <\($0)>" } ?? ""
        out += "\t*\(escaped(option.flag))*\(escaped(value))\n\n\t\t\(escaped(option.help))\n\n"
      }
    }
    return out
  }

  static func accepted(_ kind: Config.Kind) -> String {
    switch kind {
    case .absolutePathOrEmpty: return "an absolute path, or empty"
    case .boolean: return "yes or no"
    case .integer(let range): return "a whole number from \(range.lowerBound) to \(range.upperBound)"
    case .choice(let words): return "one of " + words.joined(separator: ", ")
    case .glyph: return "one character one column wide, or empty for the built-in one"
    case .text: return "text on one line"
    }
  }

  /// scdoc's inline markup characters, taken literally.
  static func escaped(_ text: String) -> String {
    text.replacingAll("\\", with: "\\\\").replacingAll("*", with: "\\*").replacingAll("_", with: "\\_")
  }
}
