/// Draws the passcode screen: pure, from state, size and capabilities to a
/// `ScreenGrid`, plus the keypad's hit areas for mouse clicks.
///
/// Three layouts: `full` (boxed keypad, from 40×22), `compact` (one-line
/// keypad, from 30×12) and `minimal` (title, dots and messages only).
public struct LockRenderer: Sendable {
  /// What the terminal can show.
  public struct Capabilities: Sendable, Equatable {
    /// TERM=linux: the kernel console's font (CP437 glyphs, no CJK).
    public var linuxConsole: Bool
    /// False when NO_COLOR is set.
    public var color: Bool

    public init(linuxConsole: Bool, color: Bool) {
      self.linuxConsole = linuxConsole
      self.color = color
    }
  }

  /// Everything on screen that does not come from `LockScreen`.
  public struct Context: Sendable, Equatable {
    public var clock: String
    public var userAtHost: String
    /// The external authenticator key's label, when one is offered.
    public var externalKey: String?
    /// The latest message from a PAM module.
    public var pamMessage: String?
    /// Caps Lock is on (where the terminal can tell: a VT), said under the
    /// account password field.
    public var capsLock = false

    public init(clock: String, userAtHost: String, externalKey: String? = nil, pamMessage: String? = nil) {
      self.clock = clock
      self.userAtHost = userAtHost
      self.externalKey = externalKey
      self.pamMessage = pamMessage
    }
  }

  public enum KeypadKey: Equatable, Sendable {
    case digit(UInt8)
    case delete
    case external
  }

  public enum Kind: Sendable, Equatable {
    case full, compact, minimal
  }

  /// Where the keys are, in 1-based terminal coordinates as mouse reports use.
  public struct Layout: Sendable, Equatable {
    public var kind: Kind
    public var keys: [(key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>)]

    public init(kind: Kind, keys: [(key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>)]) {
      self.kind = kind
      self.keys = keys
    }

    public func key(atColumn column: Int, row: Int) -> KeypadKey? {
      keys.first { $0.columns.contains(column) && $0.rows.contains(row) }?.key
    }

    public static func == (a: Layout, b: Layout) -> Bool {
      a.kind == b.kind && a.keys.count == b.keys.count
        && zip(a.keys, b.keys).allSatisfy { $0.key == $1.key && $0.columns == $1.columns && $0.rows == $1.rows }
    }
  }

  struct Glyphs {
    var filled, empty, delete: String
    var topLeft, top, topRight, side, bottomLeft, bottomRight: String
  }

  public let theme: Theme
  public let texts: Texts
  public let capabilities: Capabilities
  let glyphs: Glyphs

  public init(theme: Theme, texts: Texts, capabilities: Capabilities) {
    self.theme = theme
    // The console font has no kana or kanji.
    self.texts = capabilities.linuxConsole ? Texts(.english) : texts
    self.capabilities = capabilities
    // On the console only CP437 glyphs: • ○ ← and the single box lines (checked through /dev/vcsN).
    let console = capabilities.linuxConsole
    glyphs = Glyphs(
      filled: theme.filledGlyph ?? (console ? "•" : "●"), empty: theme.emptyGlyph ?? "○",
      delete: console ? "←" : "⌫",
      topLeft: console ? "┌" : "╭", top: "─", topRight: console ? "┐" : "╮", side: "│",
      bottomLeft: console ? "└" : "╰", bottomRight: console ? "┘" : "╯")
  }

  public static func kind(width: Int, height: Int) -> Kind {
    if width >= 40 && height >= 22 { return .full }
    if width >= 30 && height >= 12 { return .compact }
    return .minimal
  }

  public func render(_ screen: LockScreen, _ context: Context, now: Int64, width: Int, height: Int) -> (ScreenGrid, Layout) {
    var grid = ScreenGrid(width: width, height: height)
    let kind = Self.kind(width: width, height: height)
    let keypadHeight = kind == .full ? 12 : kind == .compact ? 4 : 0
    // title, prompt, blank, dots, blank, keypad, blank, PAM line
    let blockHeight = kind == .minimal ? 3 : 5 + keypadHeight + 2
    var row = max(0, (height - 1 - blockHeight) / 2)

    if screen.passwordMode { return (renderPassword(screen, context, now: now, into: grid, kind: kind), Layout(kind: kind, keys: [])) }
    grid.center(title(screen), row: row, style: .init(foreground: theme.titleColor, bold: true))
    row += 1

    let (message, isError) = self.message(screen, now: now)
    var messageStyle = ScreenGrid.Style()
    if isError { messageStyle.foreground = theme.errorColor }
    // A tiny screen drops the prompt rather than show half of it.
    if TextWidth.of(message) <= width { grid.center(message, row: row, style: messageStyle) }
    row += kind == .minimal ? 1 : 2

    grid.center(
      dots(screen, now: now, width: width), row: row, style: .init(foreground: theme.dotColor), offset: screen.shakeOffset(now: now))
    row += kind == .minimal ? 1 : 2

    var layout = Layout(kind: kind, keys: [])
    switch kind {
    case .full: layout.keys = drawBoxedKeypad(&grid, top: row, context: context)
    case .compact: layout.keys = drawCompactKeypad(&grid, top: row, context: context)
    case .minimal: break
    }
    row += keypadHeight + (kind == .minimal ? 0 : 1)

    if let message = context.pamMessage { grid.center(message, row: row) }
    grid.center(statusLine(screen, context, now: now, width: width), row: height - 1, style: .init(foreground: theme.statusColor))
    return (grid, layout)
  }

  /// The account password field: title, PAM's prompt, one mask per character.
  func renderPassword(_ screen: LockScreen, _ context: Context, now: Int64, into grid: ScreenGrid, kind: Kind) -> ScreenGrid {
    var grid = grid
    let height = grid.height
    let width = grid.width
    var row = max(0, (height - 1 - 6) / 2)
    grid.center(texts.accountPasswordTitle, row: row, style: .init(foreground: theme.titleColor, bold: true))
    row += 1
    let (message, isError) = passwordMessage(screen, context)
    var style = ScreenGrid.Style()
    if isError { style.foreground = theme.errorColor }
    if TextWidth.of(message) <= width { grid.center(message, row: row, style: style) }
    row += 2
    let fieldWidth = max(4, min(24, width - 4))
    let label = screen.passwordPrompt.map { $0.hasSuffix(" ") ? $0 : $0 + " " } ?? ""
    let masks = String(repeating: glyphs.filled, count: min(screen.entered, fieldWidth))
    let blanks = String(repeating: "_", count: fieldWidth - min(screen.entered, fieldWidth))
    let field = TextWidth.of(label) + fieldWidth <= width ? label + masks + blanks : masks + blanks
    grid.center(field, row: row, style: .init(foreground: theme.dotColor))
    if context.capsLock { grid.center(texts.capsLock, row: row + 1, style: .init(foreground: theme.errorColor, bold: true)) }
    row += 2
    if let message = context.pamMessage { grid.center(message, row: row) }
    grid.center(statusLine(screen, context, now: now, width: width), row: height - 1, style: .init(foreground: theme.statusColor))
    return grid
  }

  /// ● ● ○ ○ — typed digits filled (the last one shown briefly), the rest
  /// empty. A new passcode has no fixed length: only typed digits show.
  func dots(_ screen: LockScreen, now: Int64, width: Int) -> String {
    let shaking = screen.isShaking(now: now)
    let filled = shaking ? screen.shakeFilled : screen.entered
    let total = max(filled, screen.length ?? 0)
    guard total > 0 else { return "" }
    var symbols = (0..<total).map { $0 < filled ? glyphs.filled : glyphs.empty }
    if !shaking, filled > 0, let digit = screen.visibleDigit(now: now) { symbols[filled - 1] = String(digit) }
    let spacing = total * 3 - 2 <= width ? "  " : " "
    return symbols.joined(separator: spacing)
  }

  func keyLabel(_ key: KeypadKey, context: Context) -> String {
    switch key {
    case .digit(let d): return String(d)
    case .delete: return glyphs.delete
    case .external: return context.externalKey ?? ""
    }
  }

  var keypadRows: [[KeypadKey?]] {
    [
      [.digit(1), .digit(2), .digit(3)], [.digit(4), .digit(5), .digit(6)], [.digit(7), .digit(8), .digit(9)],
      [.external, .digit(0), .delete],
    ]
  }

  func drawBoxedKeypad(_ grid: inout ScreenGrid, top: Int, context: Context) -> [(
    key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>
  )] {
    let keyWidth = 7
    let gap = 2
    let left = (grid.width - (3 * keyWidth + 2 * gap)) / 2
    let style = ScreenGrid.Style(foreground: theme.keyColor)
    var hits: [(key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>)] = []
    for (r, keys) in keypadRows.enumerated() {
      for (c, key) in keys.enumerated() {
        guard let key, key != .external || context.externalKey != nil else { continue }
        let x = left + c * (keyWidth + gap)
        let y = top + r * 3
        let label = String(keyLabel(key, context: context).prefix(5))
        let pad = keyWidth - 2 - TextWidth.of(label)
        let inner = String(repeating: " ", count: pad / 2) + label + String(repeating: " ", count: pad - pad / 2)
        grid.put(glyphs.topLeft + String(repeating: glyphs.top, count: keyWidth - 2) + glyphs.topRight, column: x, row: y, style: style)
        grid.put(glyphs.side, column: x, row: y + 1, style: style)
        grid.put(inner, column: x + 1, row: y + 1, style: .init(foreground: theme.keyColor, bold: true))
        grid.put(glyphs.side, column: x + keyWidth - 1, row: y + 1, style: style)
        grid.put(
          glyphs.bottomLeft + String(repeating: glyphs.top, count: keyWidth - 2) + glyphs.bottomRight, column: x, row: y + 2, style: style)
        hits.append((key, (x + 1)...(x + keyWidth), (y + 1)...(y + 3)))
      }
    }
    return hits
  }

  func drawCompactKeypad(_ grid: inout ScreenGrid, top: Int, context: Context) -> [(
    key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>
  )] {
    let keyWidth = 5
    let gap = 1
    let left = (grid.width - (3 * keyWidth + 2 * gap)) / 2
    var hits: [(key: KeypadKey, columns: ClosedRange<Int>, rows: ClosedRange<Int>)] = []
    for (r, keys) in keypadRows.enumerated() {
      for (c, key) in keys.enumerated() {
        guard let key, key != .external || context.externalKey != nil else { continue }
        let x = left + c * (keyWidth + gap)
        let label = String(keyLabel(key, context: context).prefix(3))
        let pad = keyWidth - TextWidth.of(label)
        let text = String(repeating: " ", count: pad / 2) + label + String(repeating: " ", count: pad - pad / 2)
        grid.put(text, column: x, row: top + r, style: .init(foreground: theme.keyColor, inverse: true))
        hits.append((key, (x + 1)...(x + keyWidth), (top + r + 1)...(top + r + 1)))
      }
    }
    return hits
  }

  // MARK: The words, for every front end

  /// The title: the theme's own on the unlock screen, if it has one.
  public func title(_ screen: LockScreen) -> String {
    screen.flow == .unlock && screen.step == .current
      ? (theme.title ?? texts.title(screen.flow, screen.step)) : texts.title(screen.flow, screen.step)
  }

  /// The line under the title on the keypad: a notice (an error), the delay,
  /// "Checking…" or the prompt.
  public func message(_ screen: LockScreen, now: Int64) -> (text: String, isError: Bool) {
    if let notice = screen.notice { return (texts.notice(notice), notice.isError) }
    if screen.secondsUntilRetry(now: now) > 0 { return (texts.tooManyAttempts, true) }
    return (screen.busy ? texts.checking : texts.prompt(screen.flow, screen.step), false)
  }

  /// The line under the title in the account password field.
  public func passwordMessage(_ screen: LockScreen, _ context: Context) -> (text: String, isError: Bool) {
    if let notice = screen.notice { return (texts.notice(notice), notice.isError) }
    if screen.busy { return (texts.checking, false) }
    return (texts.passwordPrompt(user: String(context.userAtHost.prefix { $0 != "@" })), false)
  }

  /// The status line's parts, most important first after the clock: the
  /// time, user@host, failed attempts, the countdown, the password key's hint.
  public func statusParts(_ screen: LockScreen, _ context: Context, now: Int64) -> [String] {
    var parts = [context.clock, context.userAtHost]
    if screen.failedAttempts > 0 { parts.append(texts.failedAttempts(screen.failedAttempts)) }
    let waiting = screen.secondsUntilRetry(now: now)
    if waiting > 0 && !screen.passwordMode { parts.append(texts.tryAgain(in: waiting)) }
    if screen.offersAccountPassword && !(screen.passwordMode && screen.lockedOut) {
      parts.append(texts.passwordKeyHint(open: screen.passwordMode))
    }
    return parts
  }

  func statusLine(_ screen: LockScreen, _ context: Context, now: Int64, width: Int) -> String {
    var parts = statusParts(screen, context, now: now)
    var line = parts.joined(separator: "  ")
    while TextWidth.of(line) > width && parts.count > 1 {
      parts.remove(at: 1)  // on a narrow screen user@host goes first
      line = parts.joined(separator: "  ")
    }
    return line
  }
}
