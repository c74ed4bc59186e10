import CCairo
import CPango
import Glibc
import PasslockCore

/// cairo and pango (with glib, harfbuzz, fontconfig and freetype: some 30
/// shared libraries), loaded when the first frame is to be drawn instead of
/// before `main`. Loading them is most of a start-up (~4 ms here, as for
/// swaylock, which links the same kind), and on a compositor that sends
/// `locked` at once (sway) the lock request, and so `locked` and the ready
/// byte, come that much sooner; the first frame comes when it did. The
/// functions are the ones CCairo and CPango declare, called through the
/// addresses `dlsym` gives for their names.
struct DrawingLibrary {
  /// The soname `dlopen` asks for; pango, cairo and glib come with it.
  static let soname = "libpangocairo-1.0.so.0"

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
  let arc: @convention(c) (OpaquePointer?, Double, Double, Double, Double, Double) -> Void
  let moveTo: @convention(c) (OpaquePointer?, Double, Double) -> Void
  let fill: @convention(c) (OpaquePointer?) -> Void
  let stroke: @convention(c) (OpaquePointer?) -> Void
  let setLineWidth: @convention(c) (OpaquePointer?, Double) -> Void

  let createLayout: @convention(c) (OpaquePointer?) -> OpaquePointer?
  let showLayout: @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
  let objectUnref: @convention(c) (gpointer?) -> Void
  let fontDescriptionNew: @convention(c) () -> OpaquePointer?
  let fontDescriptionFree: @convention(c) (OpaquePointer?) -> Void
  let fontDescriptionSetFamily: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void
  let fontDescriptionSetAbsoluteSize: @convention(c) (OpaquePointer?, Double) -> Void
  let fontDescriptionSetWeight: @convention(c) (OpaquePointer?, PangoWeight) -> Void
  let layoutSetFontDescription: @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
  let layoutSetSingleParagraphMode: @convention(c) (OpaquePointer?, gboolean) -> Void
  let layoutSetWidth: @convention(c) (OpaquePointer?, Int32) -> Void
  let layoutSetEllipsize: @convention(c) (OpaquePointer?, PangoEllipsizeMode) -> Void
  let layoutSetAlignment: @convention(c) (OpaquePointer?, PangoAlignment) -> Void
  let layoutSetText: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Void
  let layoutGetUnknownGlyphsCount: @convention(c) (OpaquePointer?) -> Int32
  let layoutGetPixelSize: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Void

  /// Loads the libraries (once: the handle stays for the process's life).
  /// Fails with the loader's reason when they are missing or incomplete.
  static func load() throws(CommandFailure) -> DrawingLibrary {
    guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
      let reason = dlerror().map { String(cString: $0) } ?? soname
      throw .noSessionLock("cannot load cairo and pango to draw the lock screen (\(reason)); reinstall passlock-wayland")
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
      arc: try symbol("cairo_arc"), moveTo: try symbol("cairo_move_to"), fill: try symbol("cairo_fill"),
      stroke: try symbol("cairo_stroke"), setLineWidth: try symbol("cairo_set_line_width"),
      createLayout: try symbol("pango_cairo_create_layout"), showLayout: try symbol("pango_cairo_show_layout"),
      objectUnref: try symbol("g_object_unref"), fontDescriptionNew: try symbol("pango_font_description_new"),
      fontDescriptionFree: try symbol("pango_font_description_free"),
      fontDescriptionSetFamily: try symbol("pango_font_description_set_family"),
      fontDescriptionSetAbsoluteSize: try symbol("pango_font_description_set_absolute_size"),
      fontDescriptionSetWeight: try symbol("pango_font_description_set_weight"),
      layoutSetFontDescription: try symbol("pango_layout_set_font_description"),
      layoutSetSingleParagraphMode: try symbol("pango_layout_set_single_paragraph_mode"),
      layoutSetWidth: try symbol("pango_layout_set_width"), layoutSetEllipsize: try symbol("pango_layout_set_ellipsize"),
      layoutSetAlignment: try symbol("pango_layout_set_alignment"), layoutSetText: try symbol("pango_layout_set_text"),
      layoutGetUnknownGlyphsCount: try symbol("pango_layout_get_unknown_glyphs_count"),
      layoutGetPixelSize: try symbol("pango_layout_get_pixel_size"))
  }
}
