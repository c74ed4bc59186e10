import CCairo
import CPango
import Glibc
import PasslockCore
import PasslockPOSIX

/// Draws the passcode screen on a lock surface with cairo, its text with
/// pango (real fonts through fontconfig, so Japanese renders): the same
/// `LockScreen` state, words (`LockRenderer`'s), theme, dots, last digit
/// shown then masked, shake, keypad and status line as the terminal's, laid
/// out by `SurfaceLayout`.
struct Painter {
  let renderer: LockRenderer
  /// Said once on stderr when a font lacks characters of the text. (One
  /// thread draws, so the flag needs no lock.)
  private static nonisolated(unsafe) var warnedAboutGlyphs = false

  init(renderer: LockRenderer) { self.renderer = renderer }

  var theme: Theme { renderer.theme }

  /// Paints everything on `cairo` (scaled to logical pixels already).
  func paint(
    _ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, context: LockRenderer.Context, capsLock: Bool, now: Int64
  ) {
    setColor(cairo, SurfacePalette.background)
    cairo_paint(cairo)
    if screen.passwordMode {
      paintPasswordField(cairo, layout: layout, screen: screen, context: context, capsLock: capsLock)
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
        cairo_new_path(cairo)
        cairo_arc(cairo, key.centerX, key.centerY, key.radius, 0, 2 * Double.pi)
        cairo_set_source_rgba(cairo, keyColor.red, keyColor.green, keyColor.blue, 0.16)
        cairo_fill(cairo)
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
        cairo_new_path(cairo)
        cairo_arc(cairo, x, y, layout.dotRadius, 0, 2 * Double.pi)
        setColor(cairo, color)
        if index < filled {
          cairo_fill(cairo)
        } else {
          cairo_set_line_width(cairo, layout.unit * 1.5)
          cairo_stroke(cairo)
        }
      }
    }
  }

  /// The account password field: title, PAM's prompt as its label, one mask
  /// per character, and Caps Lock said under it.
  private func paintPasswordField(
    _ cairo: OpaquePointer, layout: SurfaceLayout, screen: LockScreen, context: LockRenderer.Context, capsLock: Bool
  ) {
    text(cairo, renderer.texts.accountPasswordTitle, in: layout.title, color: SurfacePalette.color(theme.titleColor), bold: true)
    let (message, isError) = renderer.passwordMessage(screen, context)
    text(cairo, message, in: layout.message, color: SurfacePalette.color(isError ? theme.errorColor : nil))
    let field = layout.entry
    let color = SurfacePalette.color(theme.dotColor)
    let radius = field.height / 4
    cairo_new_path(cairo)
    cairo_arc(cairo, field.x + radius, field.y + radius, radius, Double.pi, 1.5 * Double.pi)
    cairo_arc(cairo, field.x + field.width - radius, field.y + radius, radius, 1.5 * Double.pi, 2 * Double.pi)
    cairo_arc(cairo, field.x + field.width - radius, field.y + field.height - radius, radius, 0, 0.5 * Double.pi)
    cairo_arc(cairo, field.x + radius, field.y + field.height - radius, radius, 0.5 * Double.pi, Double.pi)
    cairo_close_path(cairo)
    setColor(cairo, color)
    cairo_set_line_width(cairo, layout.unit * 1.5)
    cairo_stroke(cairo)
    let label = screen.passwordPrompt.map { $0.hasSuffix(" ") ? $0 : $0 + " " } ?? ""
    let masks = String(repeating: theme.filledGlyph ?? "●", count: min(screen.entered, 64))
    text(cairo, label + masks, in: .init(rect: field, fontSize: field.height * 0.42), color: color)
    if capsLock { text(cairo, renderer.texts.capsLock, in: layout.capsLock, color: SurfacePalette.color(theme.errorColor)) }
  }

  // MARK: Pango

  /// One line of `string`, centred in `line.rect`, ellipsized when too wide.
  private func text(_ cairo: OpaquePointer, _ string: String, in line: SurfaceLayout.Line, color: SurfacePalette.RGB, bold: Bool = false) {
    guard !string.isEmpty, let layout = pango_cairo_create_layout(cairo) else { return }
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    let font = pango_font_description_new()
    defer { pango_font_description_free(font) }
    pango_font_description_set_family(font, "sans-serif")
    pango_font_description_set_absolute_size(font, line.fontSize * Double(PANGO_SCALE))
    pango_font_description_set_weight(font, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL)
    pango_layout_set_font_description(layout, font)
    pango_layout_set_single_paragraph_mode(layout, 1)
    pango_layout_set_width(layout, Int32(line.rect.width * Double(PANGO_SCALE)))
    pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
    pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
    pango_layout_set_text(layout, string, -1)
    if pango_layout_get_unknown_glyphs_count(layout) > 0 && !Self.warnedAboutGlyphs {
      Self.warnedAboutGlyphs = true
      printError("passlock-wayland: no installed font has every character of \"\(string)\"; install one that does\n")
    }
    var width: Int32 = 0
    var height: Int32 = 0
    pango_layout_get_pixel_size(layout, &width, &height)
    setColor(cairo, color)
    cairo_move_to(cairo, line.rect.x, line.rect.midY - Double(height) / 2)
    pango_cairo_show_layout(cairo, layout)
  }

  private func setColor(_ cairo: OpaquePointer, _ color: SurfacePalette.RGB) {
    cairo_set_source_rgb(cairo, color.red, color.green, color.blue)
  }
}
