/// Where the Wayland lock screen draws each part of the passcode screen, in
/// a lock surface's logical pixels (the output's scale applies on top), and
/// which keypad key a click or a touch at a point hits. Pure geometry: the
/// painter draws `LockScreen`'s state into these places, as `LockRenderer`
/// does into a terminal's cells.
///
/// One column, centred: title, prompt or notice, dots (or the password
/// field), the 3×4 keypad, the PAM module's message, and the status line.
/// Everything scales with `unit`, from the surface's size.
public struct SurfaceLayout: Sendable, Equatable {
  public struct Rect: Sendable, Equatable {
    public var x, y, width, height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
      self.x = x
      self.y = y
      self.width = width
      self.height = height
    }

    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }

    public func contains(x px: Double, y py: Double) -> Bool {
      px >= x && px < x + width && py >= y && py < y + height
    }
  }

  /// A line of text: centred in `rect`, at `fontSize` logical pixels.
  public struct Line: Sendable, Equatable {
    public var rect: Rect
    public var fontSize: Double

    public init(rect: Rect, fontSize: Double) {
      self.rect = rect
      self.fontSize = fontSize
    }
  }

  /// A round keypad key.
  public struct Key: Sendable, Equatable {
    public var key: LockRenderer.KeypadKey
    public var centerX, centerY, radius: Double
    public var labelSize: Double
  }

  /// Logical pixels per design pixel: 1 on a 420×620 surface.
  public let unit: Double
  public let title, message, pamMessage, status: Line
  /// The dots row (passcode) or the masked field (account password).
  public let entry: Rect
  /// "Caps Lock is on", under the password field.
  public let capsLock: Line
  public let dotRadius, dotSpacing: Double
  /// How far one step of the shake moves the dots (`LockScreen.shakeOffset`).
  public let shakeStep: Double
  public let keys: [Key]

  static let keypadRows: [[LockRenderer.KeypadKey]] = [
    [.digit(1), .digit(2), .digit(3)], [.digit(4), .digit(5), .digit(6)], [.digit(7), .digit(8), .digit(9)],
    [.external, .digit(0), .delete],
  ]

  /// The layout for a surface of `width`×`height` logical pixels; no keypad
  /// in the password field, no external key unless one is offered.
  public init(width: Double, height: Double, passwordField: Bool, externalKey: Bool) {
    let unit = min(2.5, max(0.4, min(width / 420, height / 620)))
    self.unit = unit
    let keyDiameter = 72 * unit
    let keyGap = (horizontal: 24 * unit, vertical: 14 * unit)
    let keypadHeight = passwordField ? 0 : 4 * keyDiameter + 3 * keyGap.vertical
    // title, gap, message, gap, entry, gap, [keypad | caps lock], gap, PAM line, gap, status
    let entryHeight = (passwordField ? 44 : 24) * unit
    let middle = passwordField ? 10 * unit + 20 * unit : 32 * unit + keypadHeight
    let blockHeight = 34 * unit + 8 * unit + 22 * unit + 28 * unit + entryHeight + middle + 22 * unit + 20 * unit + 18 * unit + 20 * unit
    let margin = 16 * unit
    let lineWidth = max(1, width - 2 * margin)
    var y = max(0, (height - blockHeight) / 2)
    func line(_ height: Double, size: Double) -> Line {
      defer { y += height }
      return Line(rect: Rect(x: margin, y: y, width: lineWidth, height: height), fontSize: size * unit)
    }
    title = line(34 * unit, size: 26)
    y += 8 * unit
    message = line(22 * unit, size: 15)
    y += 28 * unit
    let entryWidth = passwordField ? min(lineWidth, 300 * unit) : lineWidth
    entry = Rect(x: (width - entryWidth) / 2, y: y, width: entryWidth, height: entryHeight)
    y += entryHeight
    dotRadius = 7 * unit
    dotSpacing = 26 * unit
    shakeStep = 8 * unit
    var keys: [Key] = []
    if passwordField {
      y += 10 * unit
      capsLock = line(20 * unit, size: 13)
    } else {
      y += 32 * unit
      capsLock = Line(rect: Rect(x: margin, y: y, width: lineWidth, height: 0), fontSize: 13 * unit)
      let keypadWidth = 3 * keyDiameter + 2 * keyGap.horizontal
      let left = (width - keypadWidth) / 2
      for (r, row) in Self.keypadRows.enumerated() {
        for (c, key) in row.enumerated() where key != .external || externalKey {
          keys.append(
            Key(
              key: key, centerX: left + Double(c) * (keyDiameter + keyGap.horizontal) + keyDiameter / 2,
              centerY: y + Double(r) * (keyDiameter + keyGap.vertical) + keyDiameter / 2, radius: keyDiameter / 2,
              labelSize: (key == .external ? 15 : 28) * unit))
        }
      }
      y += keypadHeight
    }
    self.keys = keys
    y += 22 * unit
    pamMessage = line(20 * unit, size: 14)
    y += 18 * unit
    status = line(20 * unit, size: 13)
  }

  /// The key under a click or touch at (`x`, `y`), if any.
  public func key(atX x: Double, y: Double) -> LockRenderer.KeypadKey? {
    keys.first { key in
      let dx = x - key.centerX
      let dy = y - key.centerY
      return dx * dx + dy * dy <= key.radius * key.radius
    }?.key
  }
}
