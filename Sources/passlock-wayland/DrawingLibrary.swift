import CCairo
import Glibc

/// cairo (with fontconfig, freetype, pixman and their few dependencies),
/// loaded by the program itself rather than by the loader before `main`,
/// and before the lock is asked for: a lock screen that could not draw after
/// the compositor's `locked` could neither show nor give back the session
/// (only an accepted verdict gives it back), so a broken install is found
/// while nothing is locked yet (status 69: passlockd locks a console
/// instead). The loader's own start-up stays small (libwayland and
/// xkbcommon only), and the load runs while the gatekeeper answers the
/// status on the other core. The functions are
/// the ones CCairo declares, called through the addresses `dlsym` gives for
/// their names (fontconfig's are found through cairo's handle, which
/// depends on it).
struct DrawingLibrary {
  /// The soname `dlopen` asks for; fontconfig and freetype come with it.
  static let soname = "libcairo.so.2"

  let imageSurfaceCreateForData: @convention(c) (UnsafeMutablePointer<UInt8>?, cairo_format_t, Int32, Int32, Int32) -> OpaquePointer?
  let surfaceFlush: @convention(c) (OpaquePointer?) -> Void
  let surfaceDestroy: @convention(c) (OpaquePointer?) -> Void
  let create: @convention(c) (OpaquePointer?) -> OpaquePointer?
  let destroy: @convention(c) (OpaquePointer?) -> Void
  let scale: @convention(c) (OpaquePointer?, Double, Double) -> Void
  let setSourceRGB: @convention(c) (OpaquePointer?, Double, Double, Double) -> Void
  let setSourceRGBA: @convention(c) (OpaquePointer?, Double, Double, Double, Double) -> Void
  let paint: @convention(c) (OpaquePointer?) -> Void
  let newPath: @convention(c) (OpaquePointer?) -> Void
  let closePath: @convention(c) (OpaquePointer?) -> Void
  let moveTo: @convention(c) (OpaquePointer?, Double, Double) -> Void
  let lineTo: @convention(c) (OpaquePointer?, Double, Double) -> Void
  let curveTo: @convention(c) (OpaquePointer?, Double, Double, Double, Double, Double, Double) -> Void
  let fill: @convention(c) (OpaquePointer?) -> Void

  // Text: cairo's own calls on faces fontconfig chose (FontFallback).
  let setFontFace: @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
  let setFontSize: @convention(c) (OpaquePointer?, Double) -> Void
  let textExtents: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<cairo_text_extents_t>?) -> Void
  let fontExtents: @convention(c) (OpaquePointer?, UnsafeMutablePointer<cairo_font_extents_t>?) -> Void
  let textPath: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void
  let showText: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void
  let fontFaceForPattern: @convention(c) (OpaquePointer?) -> OpaquePointer?
  let patternCreate: @convention(c) () -> OpaquePointer?
  let patternDestroy: @convention(c) (OpaquePointer?) -> Void
  let patternAddString: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<FcChar8>?) -> FcBool
  let patternAddInteger: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> FcBool
  let patternAddBool: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, FcBool) -> FcBool
  let patternGetBool: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<FcBool>?) -> FcResult
  let patternGetCharSet: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> FcResult
  let configSubstitute: @convention(c) (OpaquePointer?, OpaquePointer?, FcMatchKind) -> FcBool
  let defaultSubstitute: @convention(c) (OpaquePointer?) -> Void
  let fontSort:
    @convention(c) (OpaquePointer?, OpaquePointer?, FcBool, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<FcResult>?) ->
      UnsafeMutablePointer<FcFontSet>?
  let fontRenderPrepare: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> OpaquePointer?
  let charSetHasChar: @convention(c) (OpaquePointer?, FcChar32) -> FcBool
  let fontFaceStatus: @convention(c) (OpaquePointer?) -> cairo_status_t
  let defaultLangs: @convention(c) () -> OpaquePointer?
  let strListCreate: @convention(c) (OpaquePointer?) -> OpaquePointer?
  let strListNext: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<FcChar8>?
  let strListDone: @convention(c) (OpaquePointer?) -> Void
  let strSetDestroy: @convention(c) (OpaquePointer?) -> Void

  /// Loads the libraries (once: the handle stays for the process's life).
  /// Fails with the loader's reason when they are missing or incomplete.
  static func load() throws(CommandFailure) -> DrawingLibrary {
    guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
      let reason = dlerror().map { String(cString: $0) } ?? soname
      throw .noSessionLock("cannot load cairo to draw the lock screen (\(reason)); reinstall passlock-wayland")
    }
    func symbol<F>(_ name: String) throws(CommandFailure) -> F {
      guard let address = dlsym(handle, name) else {
        throw .noSessionLock("\(soname) has no \(name); reinstall passlock-wayland")
      }
      return unsafeBitCast(address, to: F.self)
    }
    return DrawingLibrary(
      imageSurfaceCreateForData: try symbol("cairo_image_surface_create_for_data"),
      surfaceFlush: try symbol("cairo_surface_flush"), surfaceDestroy: try symbol("cairo_surface_destroy"),
      create: try symbol("cairo_create"), destroy: try symbol("cairo_destroy"), scale: try symbol("cairo_scale"),
      setSourceRGB: try symbol("cairo_set_source_rgb"), setSourceRGBA: try symbol("cairo_set_source_rgba"),
      paint: try symbol("cairo_paint"), newPath: try symbol("cairo_new_path"), closePath: try symbol("cairo_close_path"),
      moveTo: try symbol("cairo_move_to"), lineTo: try symbol("cairo_line_to"), curveTo: try symbol("cairo_curve_to"),
      fill: try symbol("cairo_fill"),
      setFontFace: try symbol("cairo_set_font_face"), setFontSize: try symbol("cairo_set_font_size"),
      textExtents: try symbol("cairo_text_extents"), fontExtents: try symbol("cairo_font_extents"),
      textPath: try symbol("cairo_text_path"), showText: try symbol("cairo_show_text"),
      fontFaceForPattern: try symbol("cairo_ft_font_face_create_for_pattern"),
      patternCreate: try symbol("FcPatternCreate"), patternDestroy: try symbol("FcPatternDestroy"),
      patternAddString: try symbol("FcPatternAddString"), patternAddInteger: try symbol("FcPatternAddInteger"),
      patternAddBool: try symbol("FcPatternAddBool"),
      patternGetBool: try symbol("FcPatternGetBool"), patternGetCharSet: try symbol("FcPatternGetCharSet"),
      configSubstitute: try symbol("FcConfigSubstitute"),
      defaultSubstitute: try symbol("FcDefaultSubstitute"), fontSort: try symbol("FcFontSort"),
      fontRenderPrepare: try symbol("FcFontRenderPrepare"), charSetHasChar: try symbol("FcCharSetHasChar"),
      fontFaceStatus: try symbol("cairo_font_face_status"), defaultLangs: try symbol("FcGetDefaultLangs"),
      strListCreate: try symbol("FcStrListCreate"), strListNext: try symbol("FcStrListNext"),
      strListDone: try symbol("FcStrListDone"), strSetDestroy: try symbol("FcStrSetDestroy"))
  }
}
