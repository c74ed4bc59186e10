/// `KEY=value` lines, as systemd-logind's state files under /run/systemd and
/// passlock-vt's own state record keep them. Lines without `=` are skipped;
/// a value keeps everything after the first `=`.
public enum KeyValueText {
  public static func parse(_ text: String) -> [String: String] {
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { continue }
      fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return fields
  }
}
