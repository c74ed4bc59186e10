import PasslockCore
import Testing

/// The terminal frame grid: a keystroke rewrites only what changed, wide
/// characters, NO_COLOR, and clicks on the keypad.
@Suite struct ScreenGridTests {
  @Test func aKeystrokeRewritesOnlyTheChangedCell() {
    let renderer = RendererSnapshotTests.plain
    let context = RendererSnapshotTests.context
    var screen = LockScreen(flow: .unlock, length: 6, revealLastDigit: false, now: 0)
    let (before, _) = renderer.render(screen, context, now: 0, width: 80, height: 24)
    _ = screen.key(.digit(2), now: 0)
    let (after, _) = renderer.render(screen, context, now: 0, width: 80, height: 24)
    let bytes = after.render(over: before, color: true)
    #expect(bytes == "\u{1b}[6;33H\u{1b}[0;36m●\u{1b}[0m")
    #expect(bytes.utf8.count <= 64)
  }

  @Test func theFirstFrameClearsAndDrawsEverything() {
    var grid = ScreenGrid(width: 10, height: 2)
    grid.put("ab", column: 1, row: 1, style: .init(foreground: 31))
    #expect(grid.render(over: nil, color: true) == "\u{1b}[0m\u{1b}[H\u{1b}[2J\u{1b}[2;2H\u{1b}[0;31mab\u{1b}[0m")
    #expect(grid.render(over: nil, color: false) == "\u{1b}[0m\u{1b}[H\u{1b}[2J\u{1b}[2;2Hab")
    #expect(grid.render(over: grid, color: true) == "")
  }

  @Test func noColorKeepsEmphasisButDropsColours() {
    let renderer = RendererSnapshotTests.plain
    let (grid, _) = renderer.render(RendererSnapshotTests.unlock(), RendererSnapshotTests.context, now: 0, width: 80, height: 24)
    let colored = grid.render(over: nil, color: true)
    let plain = grid.render(over: nil, color: false)
    #expect(colored.contains("\u{1b}[0;36m○"))
    #expect(!plain.contains(";36m") && !plain.contains(";31m"))
    #expect(plain.contains("\u{1b}[0;1mEnter Passcode"))
  }

  @Test func wideCharactersTakeTwoColumns() {
    var grid = ScreenGrid(width: 10, height: 1)
    grid.center("パス", row: 0)
    #expect(grid.line(0) == "   パス   ")
    var changed = ScreenGrid(width: 10, height: 1)
    changed.center("パズ", row: 0)
    // Only the second character changed: one move to its column, then it.
    #expect(changed.render(over: grid, color: false) == "\u{1b}[1;6H\u{1b}[0mズ")
  }

  @Test func mouseClicksHitTheKeypad() {
    let (_, layout) = RendererSnapshotTests.plain.render(
      RendererSnapshotTests.unlock(), RendererSnapshotTests.context, now: 0, width: 80, height: 24)
    // "│  1  │" is drawn at columns 28–34 (1-based), rows 8–10.
    #expect(layout.key(atColumn: 31, row: 9) == .digit(1))
    #expect(layout.key(atColumn: 40, row: 18) == .digit(0))
    #expect(layout.key(atColumn: 49, row: 18) == .delete)
    #expect(layout.key(atColumn: 30, row: 18) == nil, "no external key unless offered")
    #expect(layout.key(atColumn: 1, row: 1) == nil)
  }
}
