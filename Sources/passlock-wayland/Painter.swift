import CCairo
import Glibc

/// Draws the passcode screen on a lock surface with cairo, its text in real
/// fonts that fontconfig chooses (`FontFallback`, so Japanese renders): the same
/// `LockScreen` state, words (`LockRenderer`'s), theme, dots, last digit
/// shown then masked, shake, keypad and status line as the terminal's, laid
/// out by `SurfaceLayout`.
struct Painter {
  let renderer: LockRenderer
  let lib: DrawingLibrary
  private let regular: FontFallback
  private let bold: FontFallback
  /// Said once on stderr when a font lacks characters of the text. (One
  /// thread draws, so the flag needs no lock.)
  private static nonisolated(unsafe) var warnedAboutGlyphs = false

  init(renderer: LockRenderer, lib: DrawingLibrary) {
    self.renderer = renderer
    self.lib = lib
    regular = FontFallback(lib: lib, language: renderer.texts.language, bold: false)
    bold = FontFallback(lib: lib, language: renderer.texts.language, bold: true)
  }

  var theme: Theme { renderer.theme }

  /// Paints everything on `cairo` (scaled to logical pixels already).
  func paint(
    _ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, context: LockRenderer.Context, keyboard: Keyboard, now: Int64
  ) {
    setColor(cairo, SurfacePalette.background)
    lib.paint(cairo)
    if screen.passwordMode {
      paintPasswordField(cairo, layout: layout, screen: screen, context: context, keyboard: keyboard)
    } else {
      paintKeypadScreen(cairo, layout: layout, screen: screen, context: context, now: now)
    }
    if let message = context.pamMessage { text(cairo, message, in: layout.pamMessage, color: SurfacePalette.foreground) }
    let status = renderer.statusParts(screen, context, now: now).joined(separator: "   ")
    text(cairo, status, in: layout.status, color: SurfacePalette.color(theme.statusColor))
  }

  private func paintKeypadScreen(
    _ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, context: LockRenderer.Context, now: Int64
  ) {
    text(cairo, renderer.title(screen), in: layout.title, color: SurfacePalette.color(theme.titleColor), bold: true)
    let (message, isError) = renderer.message(screen, now: now)
    text(cairo, message, in: layout.message, color: SurfacePalette.color(isError ? theme.errorColor : nil))
    paintDots(cairo, layout: layout, screen: screen, now: now)
    let keyColor = SurfacePalette.color(theme.keyColor)
    for key in layout.keys {
      let label: String
      switch key.key {
      case .digit(let digit):
        // A round key, lightly filled, as on a phone.
        circle(cairo, x: key.centerX, y: key.centerY, radius: key.radius)
        lib.setSourceRGBA(cairo, keyColor.red, keyColor.green, keyColor.blue, 0.16)
        lib.fill(cairo)
        label = String(digit)
      case .delete: label = "⌫"
      case .external: label = context.externalKey ?? ""
      }
      let rect = SurfaceLayout.Rect(
        x: key.centerX - key.radius, y: key.centerY - key.radius, width: 2 * key.radius, height: 2 * key.radius)
      text(cairo, label, in: SurfaceLayout.Line(rect: rect, fontSize: key.labelSize), color: keyColor, bold: key.key != .external)
    }
  }

  /// ● ● ○ ○: typed digits filled (the last one shown briefly), the rest
  /// empty; during the shake, the dots that were filled move and then clear.
  private func paintDots(_ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, now: Int64) {
    let shaking = screen.isShaking(now: now)
    let filled = shaking ? screen.shakeFilled : screen.entered
    let total = max(filled, screen.length ?? 0)
    guard total > 0 else { return }
    let color = SurfacePalette.color(theme.dotColor)
    let visible = shaking ? nil : screen.visibleDigit(now: now)
    let offset = Double(screen.shakeOffset(now: now)) * layout.shakeStep
    let left = layout.entry.midX - Double(total - 1) * layout.dotSpacing / 2 + offset
    for index in 0..<total {
      let x = left + Double(index) * layout.dotSpacing
      let y = layout.entry.midY
      let cell = SurfaceLayout.Rect(x: x - layout.dotSpacing / 2, y: layout.entry.y, width: layout.dotSpacing, height: layout.entry.height)
      if index == filled - 1, let visible {
        text(cairo, String(visible), in: .init(rect: cell, fontSize: layout.dotRadius * 3), color: color, bold: true)
      } else if let glyph = index < filled ? theme.filledGlyph : theme.emptyGlyph {
        text(cairo, glyph, in: .init(rect: cell, fontSize: layout.dotRadius * 2.6), color: color)
      } else {
        if index < filled {
          circle(cairo, x: x, y: y, radius: layout.dotRadius)
        } else {
          ring(cairo, x: x, y: y, radius: layout.dotRadius, width: layout.unit * 1.5)
        }
        setColor(cairo, color)
        lib.fill(cairo)
      }
    }
  }

  /// What the keyboard's state says under the password field.
  struct Keyboard {
    var capsLock: Bool
    /// The layout in force, when there are several.
    var layoutName: String?
  }

  /// The account password field: title, PAM's prompt as its label, one mask
  /// per character, and under it the layout in force (when there are
  /// several) and Caps Lock, in the error colour while it is on.
  private func paintPasswordField(
    _ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, context: LockRenderer.Context, keyboard: Keyboard
  ) {
    text(cairo, renderer.texts.accountPasswordTitle, in: layout.title, color: SurfacePalette.color(theme.titleColor), bold: true)
    let (message, isError) = renderer.passwordMessage(screen, context)
    text(cairo, message, in: layout.message, color: SurfacePalette.color(isError ? theme.errorColor : nil))
    let field = layout.entry
    let color = SurfacePalette.color(theme.dotColor)
    let radius = field.height / 4
    roundedOutline(cairo, field, radius: radius, width: layout.unit * 1.5)
    setColor(cairo, color)
    lib.fill(cairo)
    let label = screen.passwordPrompt.map { $0.hasSuffix(" ") ? $0 : $0 + " " } ?? ""
    // As many masks as fit beside PAM's label (the terminal caps them at
    // its field's width too): a long password does not run out of the field.
    let masks = String(repeating: theme.filledGlyph ?? "●", count: min(screen.entered, 12))
    text(cairo, label + masks, in: .init(rect: field, fontSize: field.height * 0.42), color: color)
    let under = [keyboard.layoutName, keyboard.capsLock ? renderer.texts.capsLock : nil].compactMap { $0 }
    if !under.isEmpty {
      let color = SurfacePalette.color(keyboard.capsLock ? theme.errorColor : nil)
      text(cairo, under.joined(separator: " · "), in: layout.capsLock, color: color)
    }
  }

  // MARK: Text

  /// One line of `string`, centred in `line.rect`, ellipsized when too wide:
  /// each character in the first font that has it, runs of one font drawn
  /// with one call.
  private func text(_ cairo: OpaquePointer, _ string: String, in line: SurfaceLayout.Line, color: SurfacePalette.RGB, bold: Bool = false) {
    let fonts = bold ? self.bold : regular
    lib.setFontSize(cairo, line.fontSize)
    var glyphs = string.map(FontFallback.drawn).filter { !$0.isEmpty }.map { measure(cairo, $0, fonts: fonts) }
    guard !glyphs.isEmpty else { return }
    if glyphs.contains(where: { !$0.found }) && !Self.warnedAboutGlyphs {
      Self.warnedAboutGlyphs = true
      printError("passlock-wayland: no installed font has every character of \"\(string)\"; install one that does\n")
    }
    var width = glyphs.reduce(0) { $0 + $1.advance }
    if width > line.rect.width {
      let ellipsis = measure(cairo, "…", fonts: fonts)
      while let last = glyphs.last, width + ellipsis.advance > line.rect.width {
        glyphs.removeLast()
        width -= last.advance
      }
      glyphs.append(ellipsis)
      width += ellipsis.advance
    }
    // Centred on the line the fonts used make (the largest ascent over the
    // largest descent), as pango centres a line.
    var ascent = 0.0
    var descent = 0.0
    for font in Set(glyphs.map({ $0.font })) {
      lib.setFontFace(cairo, fonts.face(font))
      var extents = cairo_font_extents_t()
      lib.fontExtents(cairo, &extents)
      ascent = max(ascent, extents.ascent)
      descent = max(descent, extents.descent)
    }
    let baseline = line.rect.midY + (ascent - descent) / 2
    setColor(cairo, color)
    var x = line.rect.x + (line.rect.width - width) / 2
    var start = glyphs.startIndex
    while start < glyphs.endIndex {
      let font = glyphs[start].font
      let end = glyphs[start...].firstIndex { $0.font != font } ?? glyphs.endIndex
      lib.setFontFace(cairo, fonts.face(font))
      lib.moveTo(cairo, x, baseline)
      let run = glyphs[start..<end].map({ $0.text }).joined()
      if fonts.hasPlainOutlines(font) {
        // As outlines filled, not glyph images composited: the same text,
        // without pixman's glyph cache (a 256 KiB table, a page of it per glyph).
        lib.textPath(cairo, run)
        lib.fill(cairo)
      } else {
        lib.showText(cairo, run)
      }
      x += glyphs[start..<end].reduce(0) { $0 + $1.advance }
      start = end
    }
  }

  /// A character as `FontFallback.drawn` gives it, the font it is drawn in
  /// (when none has it, `found` is false and the first font draws its
  /// missing-glyph box) and how far it moves the pen.
  private func measure(_ cairo: OpaquePointer, _ text: String, fonts: FontFallback) -> (
    text: String, font: Int, found: Bool, advance: Double
  ) {
    let found = fonts.font(for: text)
    let font = found ?? 0
    lib.setFontFace(cairo, fonts.face(font))
    var extents = cairo_text_extents_t()
    lib.textExtents(cairo, text, &extents)
    return (text, font, found != nil, extents.x_advance)
  }

  private func setColor(_ cairo: OpaquePointer, _ color: SurfacePalette.RGB) {
    lib.setSourceRGB(cairo, color.red, color.green, color.blue)
  }

  // Circles and round corners as cubic Béziers, and outlines as rings filled:
  // cairo_arc computes its segments, and cairo_stroke its pen, with sin, cos,
  // tan, acos and pow, whose tables would keep 0.3 MiB of libm's pages
  // resident for these few shapes.

  /// How far a quarter circle's two control points lie from its ends, in radii.
  private static let kappa = 0.552_284_749_8

  /// A new path: the circle around (x, y), a square rounded all the way.
  private func circle(_ cairo: OpaquePointer, x: Double, y: Double, radius: Double) {
    lib.newPath(cairo)
    appendRoundedRectangle(cairo, Self.square(x: x, y: y, radius: radius), radius: radius)
  }

  /// A new path: the ring a line of `width` along that circle would cover.
  private func ring(_ cairo: OpaquePointer, x: Double, y: Double, radius: Double, width: Double) {
    roundedOutline(cairo, Self.square(x: x, y: y, radius: radius), radius: radius, width: width)
  }

  /// The square a circle fills to its sides.
  private static func square(x: Double, y: Double, radius: Double) -> SurfaceLayout.Rect {
    SurfaceLayout.Rect(x: x - radius, y: y - radius, width: 2 * radius, height: 2 * radius)
  }

  /// A new path: the band a line of `width` along `rect`, its corners
  /// rounded to `radius`, would cover: the rectangle grown by half the width,
  /// less the one shrunk by half the width (run the other way, which cuts it
  /// out: cairo fills by the nonzero winding rule).
  private func roundedOutline(_ cairo: OpaquePointer, _ rect: SurfaceLayout.Rect, radius: Double, width: Double) {
    let half = width / 2
    lib.newPath(cairo)
    appendRoundedRectangle(
      cairo, .init(x: rect.x - half, y: rect.y - half, width: rect.width + width, height: rect.height + width), radius: radius + half)
    appendRoundedRectangle(
      cairo, .init(x: rect.x + half, y: rect.y + half, width: rect.width - width, height: rect.height - width),
      radius: max(0, radius - half), reversed: true)
  }

  /// Appends `rect` with its corners rounded to `radius`, clockwise on
  /// screen, or the other way when `reversed` (mirrored top to bottom).
  private func appendRoundedRectangle(_ cairo: OpaquePointer, _ rect: SurfaceLayout.Rect, radius: Double, reversed: Bool = false) {
    let (left, right) = (rect.x, rect.x + rect.width)
    let (top, bottom) = reversed ? (rect.y + rect.height, rect.y) : (rect.y, rect.y + rect.height)
    let (rx, ry) = (radius, reversed ? -radius : radius)
    let (kx, ky) = (rx * Self.kappa, ry * Self.kappa)
    lib.moveTo(cairo, left + rx, top)
    lib.lineTo(cairo, right - rx, top)
    lib.curveTo(cairo, right - rx + kx, top, right, top + ry - ky, right, top + ry)
    lib.lineTo(cairo, right, bottom - ry)
    lib.curveTo(cairo, right, bottom - ry + ky, right - rx + kx, bottom, right - rx, bottom)
    lib.lineTo(cairo, left + rx, bottom)
    lib.curveTo(cairo, left + rx - kx, bottom, left, bottom - ry + ky, left, bottom - ry)
    lib.lineTo(cairo, left, top + ry)
    lib.curveTo(cairo, left, top + ry - ky, left + rx - kx, top, left + rx, top)
    lib.closePath(cairo)
  }
}
