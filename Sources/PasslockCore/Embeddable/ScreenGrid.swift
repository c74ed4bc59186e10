/// A screenful of cells, each one scalar with a style, and the bytes that
/// turn one screenful into another. After the first frame only changed runs
/// are written, so a keystroke costs a few dozen bytes on a slow line.
public struct ScreenGrid: Equatable, Sendable {
  public struct Cell: Equatable, Sendable {
    public var scalar: Unicode.Scalar
    public var style: Style
    /// The right half of a double-width character: drawn by its left half.
    public var isContinuation: Bool

    static let blank = Cell(scalar: " ", style: .plain, isContinuation: false)
  }

  /// Colours and emphasis as SGR parameters; `.plain` resets.
  public struct Style: Equatable, Hashable, Sendable {
    public var foreground: Int?  // SGR colour 30–37, 90–97
    public var bold: Bool
    public var inverse: Bool

    public init(foreground: Int? = nil, bold: Bool = false, inverse: Bool = false) {
      self.foreground = foreground
      self.bold = bold
      self.inverse = inverse
    }

    public static let plain = Style()

    var sgr: String {
      var parts = ["0"]
      if bold { parts.append("1") }
      if inverse { parts.append("7") }
      if let foreground { parts.append(String(foreground)) }
      return "\u{1b}[" + parts.joined(separator: ";") + "m"
    }
  }

  public let width: Int
  public let height: Int
  public private(set) var cells: [Cell]

  public init(width: Int, height: Int) {
    self.width = max(1, width)
    self.height = max(1, height)
    cells = Array(repeating: .blank, count: self.width * self.height)
  }

  /// Writes `text` at 0-based `column`, `row`; what falls outside is clipped.
  public mutating func put(_ text: String, column: Int, row: Int, style: Style = .plain) {
    guard row >= 0, row < height else { return }
    var x = column
    for scalar in text.unicodeScalars {
      let w = TextWidth.of(scalar)
      if w == 0 { continue }
      if x >= 0 && x + w <= width {
        cells[row * width + x] = Cell(scalar: scalar, style: style, isContinuation: false)
        if w == 2 { cells[row * width + x + 1] = Cell(scalar: " ", style: style, isContinuation: true) }
      }
      x += w
    }
  }

  /// Centres `text` on `row` (shifted by `offset` columns); a text wider
  /// than the row is cut at its end (TextWidth.fitting).
  public mutating func center(_ text: String, row: Int, style: Style = .plain, offset: Int = 0) {
    let fitted = TextWidth.fitting(text, into: width)
    put(fitted, column: (width - TextWidth.of(fitted)) / 2 + offset, row: row, style: style)
  }

  /// The text of one row, for tests and for reading a screen back.
  public func line(_ row: Int) -> String {
    var out = ""
    for x in 0..<width where !cells[row * width + x].isContinuation {
      out.unicodeScalars.append(cells[row * width + x].scalar)
    }
    return out
  }

  public var lines: [String] { (0..<height).map(line) }

  /// The bytes that draw this grid over `previous` (nil: a blank screen of any size).
  public func render(over previous: ScreenGrid?, color: Bool) -> String {
    let full = previous == nil || previous!.width != width || previous!.height != height
    var out = full ? "\u{1b}[0m\u{1b}[H\u{1b}[2J" : ""
    var current: Style? = full ? .plain : nil
    for row in 0..<height {
      var x = 0
      while x < width {
        let index = row * width + x
        let changed = full ? cells[index] != .blank : cells[index] != previous!.cells[index]
        guard changed else {
          x += 1
          continue
        }
        // A run of changed cells: move once, then write them.
        var start = x
        if cells[index].isContinuation && start > 0 { start -= 1 }
        out += "\u{1b}[\(row + 1);\(start + 1)H"
        x = start
        while x < width {
          let i = row * width + x
          let differs = full ? cells[i] != .blank : cells[i] != previous!.cells[i]
          // Keep going through short unchanged gaps: a move costs more than a few cells.
          if !differs
            && !(1...3).contains(where: { x + $0 < width && (full ? cells[i + $0] != .blank : cells[i + $0] != previous!.cells[i + $0]) })
          {
            break
          }
          let cell = cells[i]
          if !cell.isContinuation {
            let style = color ? cell.style : Style(bold: cell.style.bold, inverse: cell.style.inverse)
            if style != current {
              out += style.sgr
              current = style
            }
            out.unicodeScalars.append(cell.scalar)
          }
          x += 1
        }
      }
    }
    if current != .plain && current != nil { out += Style.plain.sgr }
    return out
  }
}
