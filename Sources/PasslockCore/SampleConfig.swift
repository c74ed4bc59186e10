/// The shipped config/passlock.conf, made from `Config.schema`: every key
/// commented out at its default under its description, so the file and
/// passlock.conf(5) say the same. `passlock-docs sample-config` prints it;
/// a test keeps the checked-in file equal to it.
public enum SampleConfig {
  static let header = """
    # passlock configuration. Every key is shown commented out at its default.
    # Load order: /etc/passlock/passlock.conf, then drop-ins in
    # /etc/passlock/passlock.conf.d/*.conf. The setuid passlock-auth reads only the
    # root-owned file beside its install prefix (/usr/bin -> /etc/passlock/passlock.conf).
    # The user's $XDG_CONFIG_HOME/passlock/passlock.conf (and its passlock.conf.d/)
    # come after the system files for the lock screen's appearance.
    # 'passlock config' prints the merged result; man passlock.conf has the
    # accepted values. Unknown keys and bad values are errors reported as file:line.
    # (Made from the code's own table by 'passlock-docs sample-config'.)

    """

  public static func text() -> String {
    var out = header
    for section in Config.sectionNames {
      out += "\n[\(section)]\n"
      if let note = Config.sectionNotes[section] { out += comment(note) + "\n" }
      for key in Config.schema where key.section == section {
        out += comment(key.help) + "#\(key.key)=\(key.defaultValue)\n"
      }
    }
    return out
  }

  /// `text` as "# " lines of at most `width` columns, broken at spaces.
  static func comment(_ text: String, width: Int = 78) -> String {
    var out = ""
    var line = "#"
    for word in text.split(separator: " ") {
      if line.count + 1 + word.count > width && line != "#" {
        out += line + "\n"
        line = "#"
      }
      line += " " + word
    }
    return out + line + "\n"
  }
}
