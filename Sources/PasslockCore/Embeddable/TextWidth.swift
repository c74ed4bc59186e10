/// Terminal column widths, enough for the texts passlock draws: East Asian
/// wide and fullwidth characters take two columns, combining marks none.
public enum TextWidth {
  public static func of(_ scalar: Unicode.Scalar) -> Int {
    let v = scalar.value
    if v == 0 || (0x300...0x36f).contains(v) || (0x200b...0x200f).contains(v) { return 0 }
    if (0x1100...0x115f).contains(v) || (0x2e80...0x303e).contains(v) || (0x3041...0x33ff).contains(v)
      || (0x3400...0x4dbf).contains(v) || (0x4e00...0x9fff).contains(v) || (0xa000...0xa4cf).contains(v)
      || (0xac00...0xd7a3).contains(v) || (0xf900...0xfaff).contains(v) || (0xfe30...0xfe4f).contains(v)
      || (0xff00...0xff60).contains(v) || (0xffe0...0xffe6).contains(v) || (0x1f300...0x1f64f).contains(v)
      || (0x20000...0x3fffd).contains(v)
    {
      return 2
    }
    return 1
  }

  public static func of(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + of($1) }
  }

  /// `text` cut to `columns`, its end marked with "…", when it is wider: a
  /// line too long for the screen keeps its beginning (its words say what
  /// happened) rather than losing both ends to the centring.
  public static func fitting(_ text: String, into columns: Int) -> String {
    guard of(text) > columns, columns > 0 else { return text }
    var out = ""
    var used = 0
    for scalar in text.unicodeScalars {
      let w = of(scalar)
      guard used + w <= columns - 1 else { break }
      out.unicodeScalars.append(scalar)
      used += w
    }
    return out + "…"
  }
}
