import CCairo
import PasslockCore

/// The fonts one weight of text is drawn in: fontconfig's sans-serif for
/// the lock screen's language, as the list of fonts in fontconfig's order of
/// preference (so Japanese prefers a face with kana and kanji, as pango
/// would); each character is drawn in the first font that has it. That is
/// pango's font fallback without pango: harfbuzz, fribidi and glib stay
/// unloaded (about 5 MiB of the lock screen's memory). Characters are
/// placed one after another, unshaped, as swaylock draws its text:
/// enough for the lock screen's own languages, user and host names and most
/// messages; Arabic or Indic text in a PAM message is drawn unjoined.
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
    _ = lib.patternAddString(pattern, FC_LANG, language.rawValue)
    _ = lib.patternAddInteger(pattern, FC_WEIGHT, bold ? FC_WEIGHT_BOLD : FC_WEIGHT_REGULAR)
    _ = lib.configSubstitute(nil, pattern, FcMatchPattern)
    lib.defaultSubstitute(pattern)
    var result = FcResultNoMatch
    // Trimmed: a font that adds no character to those before it is left out.
    fonts = lib.fontSort(nil, pattern, FcBool(FcTrue), nil, &result)
    self.pattern = pattern
  }

  /// The first font with every scalar of `character`; nil when none has it.
  func font(for character: Character) -> Int? {
    guard let fonts else { return nil }
    for index in 0..<Int(fonts.pointee.nfont) {
      var charset: OpaquePointer?
      guard lib.patternGetCharSet(fonts.pointee.fonts[index], FC_CHARSET, 0, &charset) == FcResultMatch else { continue }
      if character.unicodeScalars.allSatisfy({ lib.charSetHasChar(charset, $0.value) != 0 }) { return index }
    }
    return nil
  }

  /// cairo's face for font `index` (made the first time it is needed); nil
  /// when there is no such font (none installed at all).
  func face(_ index: Int) -> OpaquePointer? {
    if let face = faces[index] { return face }
    guard let fonts, index < Int(fonts.pointee.nfont) else { return nil }
    let prepared = lib.fontRenderPrepare(nil, pattern, fonts.pointee.fonts[index])
    defer { lib.patternDestroy(prepared) }
    guard let face = lib.fontFaceForPattern(prepared) else { return nil }
    faces[index] = face
    return face
  }
}
