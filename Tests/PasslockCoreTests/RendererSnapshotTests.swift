import PasslockCore
import Testing

/// Exact frames from the renderer. Trailing spaces are trimmed from each line
/// so the literals stay readable; everything else is compared to the cell.
@Suite struct RendererSnapshotTests {
  static let context = LockRenderer.Context(clock: "09:41", userAtHost: "alice@studio")
  static let plain = LockRenderer(
    theme: Theme(), texts: Texts(.english), capabilities: .init(linuxConsole: false, color: true))

  static func frame(
    _ screen: LockScreen, renderer: LockRenderer = plain, context: LockRenderer.Context = context,
    now: Int64 = 0, width: Int = 80, height: Int = 24
  ) -> String {
    let (grid, _) = renderer.render(screen, context, now: now, width: width, height: height)
    return grid.lines.map { line in
      var line = line
      while line.last == " " { line.removeLast() }
      return line
    }.joined(separator: "\n")
  }

  static func unlock(length: Int = 6) -> LockScreen {
    LockScreen(flow: .unlock, length: length, now: 0)
  }

  static func typed(_ digits: [UInt8], into screen: LockScreen, at now: Int64 = 0) -> LockScreen {
    var screen = screen
    for digit in digits { _ = screen.key(.digit(digit), now: now) }
    return screen
  }
}
