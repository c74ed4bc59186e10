import CCairo

/// The fonts one weight of text is drawn in: fontconfig's sans-serif for
/// the lock screen's language, as the list of fonts in fontconfig's order of
/// preference (so Japanese prefers a face with kana and kanji, as pango
/// would); each character is drawn in the first font that has it. That is
/// pango's font fallback without pango: harfbuzz, fribidi and glib stay
/// unloaded (6 MiB of the lock screen's memory). Characters are
/// placed one after another, unshaped, as swaylock draws its text:
/// enough for the lock screen's own languages, user and host names and most
/// messages; Arabic or Indic text in a PAM message is drawn unjoined, and
/// right-to-left text left to right.
final class FontFallback {
  private let lib: DrawingLibrary
  /// What was asked for, which `FcFontRenderPrepare` combines with each font.
  private let pattern: OpaquePointer?
  /// fontconfig's fonts in order, kept for the process's life.
  private let fonts: UnsafeMutablePointer<FcFontSet>?
  private var faces: [Int: OpaquePointer] = [:]

  init(lib: DrawingLibrary, language: Texts.Language, bold: Bool) {
    self.lib = lib
    let pattern = lib.patternCreate()
    _ = lib.patternAddString(pattern, FC_FAMILY, "sans-serif")
    // The screen's language first, then the locale's (FC_LANG, LC_ALL,
    // LC_CTYPE, LANG, as pango takes them): an English screen on a Chinese
    // locale draws a Chinese host name in a Chinese face.
    _ = lib.patternAddString(pattern, FC_LANG, language.rawValue)
    let defaultLanguages = lib.defaultLangs()
    if let list = lib.strListCreate(defaultLanguages) {
      while let name = lib.strListNext(list) { _ = lib.patternAddString(pattern, FC_LANG, name) }
      lib.strListDone(list)
    }
    lib.strSetDestroy(defaultLanguages)
    _ = lib.patternAddInteger(pattern, FC_WEIGHT, bold ? FC_WEIGHT_BOLD : FC_WEIGHT_REGULAR)
    // Outlines as designed, not hinted: at these sizes, in grayscale, they
    // look the same, and the hinting Debian configures (slight: FreeType's
    // auto-hinter, which analyses each face first) held 0.12 MiB more heap.
    _ = lib.patternAddBool(pattern, FC_HINTING, FcBool(FcFalse))
    _ = lib.configSubstitute(nil, pattern, FcMatchPattern)
    lib.defaultSubstitute(pattern)
    var result = FcResultNoMatch
    // Trimmed: a font that adds no character to those before it is left out.
    fonts = lib.fontSort(nil, pattern, FcBool(FcTrue), nil, &result)
    self.pattern = pattern
  }

  /// What is drawn of `character`: nothing for one made only of invisible
  /// format characters (ZWJ, variation selectors, bidi marks), which fonts
  /// need not have; a space for a control character (a tab in a PAM
  /// message); otherwise the character without its invisible parts.
  static func drawn(_ character: Character) -> String {
    var scalars = String.UnicodeScalarView()
    scalars.append(contentsOf: character.unicodeScalars.filter { !isInvisible($0) })
    if let first = scalars.first, first.properties.generalCategory == .control { return " " }
    return String(scalars)
  }

  private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.generalCategory == .format || (0xFE00...0xFE0F).contains(scalar.value)
      || (0xE0100...0xE01EF).contains(scalar.value)
  }

  /// The first font with every scalar of `text` (one character as `drawn`
  /// gives it), else the first with its first scalar (a combining mark
  /// another font lacks is drawn as a box, the letter is not); nil when no
  /// font has even that.
  func font(for text: String) -> Int? {
    guard let fonts, let first = text.unicodeScalars.first else { return nil }
    var firstCovering: Int?
    for index in 0..<Int(fonts.pointee.nfont) {
      var charset: OpaquePointer?
      guard lib.patternGetCharSet(fonts.pointee.fonts[index], FC_CHARSET, 0, &charset) == FcResultMatch else { continue }
      if text.unicodeScalars.allSatisfy({ lib.charSetHasChar(charset, $0.value) != 0 }) { return index }
      if firstCovering == nil && lib.charSetHasChar(charset, first.value) != 0 { firstCovering = index }
    }
    return firstCovering
  }

  /// Whether font `index` has outlines to fill: not for a colour font (emoji)
  /// or a bitmap-only one, whose glyphs are images (`Painter` composites
  /// those as they are).
  func hasPlainOutlines(_ index: Int) -> Bool {
    guard let fonts, index < Int(fonts.pointee.nfont) else { return true }
    var outline = FcBool(FcTrue)
    var color = FcBool(FcFalse)
    _ = lib.patternGetBool(fonts.pointee.fonts[index], FC_OUTLINE, 0, &outline)
    _ = lib.patternGetBool(fonts.pointee.fonts[index], FC_COLOR, 0, &color)
    return outline != 0 && color == 0
  }

  /// cairo's face for font `index` (made the first time it is needed); nil
  /// when there is no such font (none installed at all) or cairo cannot
  /// use it (cairo's default face is drawn then).
  func face(_ index: Int) -> OpaquePointer? {
    if let face = faces[index] { return face }
    guard let fonts, index < Int(fonts.pointee.nfont),
      let prepared = lib.fontRenderPrepare(nil, pattern, fonts.pointee.fonts[index])
    else { return nil }
    defer { lib.patternDestroy(prepared) }
    // Never NULL: a face cairo could not make is its error object, which
    // would put the frame's context in error (nothing more drawn).
    guard let face = lib.fontFaceForPattern(prepared), lib.fontFaceStatus(face) == CAIRO_STATUS_SUCCESS else { return nil }
    faces[index] = face
    return face
  }
}
