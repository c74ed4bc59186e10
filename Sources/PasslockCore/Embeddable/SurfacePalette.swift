/// The theme's colours on a lock surface: `Theme` names them as a terminal
/// does (SGR 30–37, 90–97, nil for the terminal's default), so the surface
/// gives each the RGB a dark terminal would (the Tango palette), on a dark
/// background of its own.
public enum SurfacePalette {
  public struct RGB: Sendable, Equatable {
    public var red, green, blue: Double

    public init(_ red: Double, _ green: Double, _ blue: Double) {
      self.red = red
      self.green = green
      self.blue = blue
    }

    /// From 0xRRGGBB.
    init(hex: Int) {
      self.init(Double((hex >> 16) & 0xff) / 255, Double((hex >> 8) & 0xff) / 255, Double(hex & 0xff) / 255)
    }
  }

  /// The lock surface's background: #15181d.
  public static let background = RGB(hex: 0x15181d)
  /// The default foreground, for a theme colour of `default`.
  public static let foreground = RGB(hex: 0xeeeeec)

  static let normal = [0x555753, 0xef2929, 0x8ae234, 0xfce94f, 0x729fcf, 0xad7fa8, 0x34e2e2, 0xd3d7cf]
  static let bright = [0x888a85, 0xff6b6b, 0xb5f07a, 0xfff59d, 0xa5c8f0, 0xd3a8cf, 0x87f5f5, 0xffffff]

  /// The colour for a theme's SGR code (black is lifted to grey: it would
  /// vanish on the dark background).
  public static func color(_ sgr: Int?) -> RGB {
    switch sgr {
    case .some(let code) where (30...37).contains(code): return RGB(hex: normal[code - 30])
    case .some(let code) where (90...97).contains(code): return RGB(hex: bright[code - 90])
    default: return foreground
    }
  }
}
