import CSessionLock
import CWaylandClient

/// One `wl_output` and the lock surface that covers it: its scale (buffers
/// are drawn at the output's scale, `wl_surface_set_buffer_scale`), the size
/// the compositor configures, and what was last drawn on it.
final class OutputSurface {
  let output: OpaquePointer
  /// The output's global name in the registry (for global_remove).
  let name: UInt32
  unowned(unsafe) let lock: WaylandLock
  private(set) var scale: Int32 = 1
  /// The output sent its first `done`: its scale is known.
  private(set) var described = false
  private var surface: OpaquePointer?
  private var lockSurface: OpaquePointer?
  private var width: UInt32 = 0
  private var height: UInt32 = 0
  /// The state of the frame on screen (`WaylandLock.FrameState`); nil: draw again.
  private var drawn: WaylandLock.FrameState?
  /// Where the keys are on it, as last drawn (for clicks and taps).
  private(set) var layout: SurfaceLayout?
  /// The frame callback of our first frames, until the compositor has shown one.
  private var frameCallback: OpaquePointer?
  /// The compositor has drawn a frame of this output with ours in it (its
  /// frame callback came), not only taken our buffer.
  private(set) var shown = false

  init(output: OpaquePointer, name: UInt32, lock: WaylandLock) {
    self.output = output
    self.name = name
    self.lock = lock
  }

  deinit {
    if let frameCallback { wl_callback_destroy(frameCallback) }
    if let lockSurface { ext_session_lock_surface_v1_destroy(lockSurface) }
    if let surface { wl_surface_destroy(surface) }
    wl_output_release(output)
  }

  var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
  var hasLockSurface: Bool { lockSurface != nil }

  func isSurface(_ other: OpaquePointer) -> Bool { surface == other }

  // MARK: Events

  func scaleChanged(_ factor: Int32) {
    scale = min(max(1, factor), Self.maximumScale)
    drawn = nil
  }

  /// Bounds on what a compositor may ask for: beyond them it is nonsense
  /// (a buffer of 0x90000000 × 1 pixels), and the surface is left without
  /// a frame (the compositor shows its own locked background) rather than
  /// the lock screen trapping on an overflow.
  static let maximumScale: Int32 = 8
  /// In buffer pixels (size × scale): 1 GiB of ARGB at most, within wl_shm's 32-bit sizes.
  static let maximumSide: UInt32 = 16_384

  func done() {
    let first = !described
    described = true
    if first { lock.outputDescribed(self) }
  }

  /// ext_session_lock_surface_v1.configure: the size to draw at, acknowledged
  /// before the frame that answers it is committed.
  func configure(serial: UInt32, width: UInt32, height: UInt32) {
    guard let lockSurface else { return }
    ext_session_lock_surface_v1_ack_configure(lockSurface, serial)
    self.width = width
    self.height = height
    drawn = nil
  }

  func redrawAll() { drawn = nil }

  /// wl_callback.done for a frame of ours: the compositor has drawn it.
  func frameShown() {
    if let frameCallback { wl_callback_destroy(frameCallback) }
    frameCallback = nil
    shown = true
    lock.reportReadyOnceShown()
  }

  // MARK: Drawing

  /// Gives this output its lock surface (on the lock's output list from now on).
  func createLockSurface(lock sessionLock: OpaquePointer, compositor: OpaquePointer) {
    guard lockSurface == nil, let surface = wl_compositor_create_surface(compositor) else { return }
    self.surface = surface
    // Opaque: the compositor need not draw anything behind it.
    if let region = wl_compositor_create_region(compositor) {
      wl_region_add(region, 0, 0, Int32.max, Int32.max)
      wl_surface_set_opaque_region(surface, region)
      wl_region_destroy(region)
    }
    lockSurface = ext_session_lock_v1_get_lock_surface(sessionLock, surface, output)
    ext_session_lock_surface_v1_add_listener(lockSurface, LockListeners.lockSurface, opaque)
  }

  /// The compositor has said the size, and the frame on screen is not the
  /// one showing `state`.
  func needsFrame(_ state: WaylandLock.FrameState) -> Bool {
    let side = 1...(Self.maximumSide / UInt32(scale))
    return surface != nil && side.contains(width) && side.contains(height) && drawn != state
  }

  /// Draws the frame showing `state`, unless it is already on screen
  /// or the compositor has not said the size yet.
  func draw(
    state: WaylandLock.FrameState, shm: OpaquePointer, lib: DrawingLibrary, paint: (OpaquePointer, SurfaceLayout) -> Void,
    layoutFor: (Double, Double) -> SurfaceLayout
  ) {
    guard let surface, needsFrame(state) else { return }
    guard let buffer = ShmBuffer(shm: shm, width: Int32(width) * scale, height: Int32(height) * scale, lib: lib) else { return }
    let layout = layoutFor(Double(width), Double(height))
    lib.scale(buffer.cairo, Double(scale), Double(scale))
    paint(buffer.cairo, layout)
    buffer.flush()
    wl_surface_set_buffer_scale(surface, scale)
    wl_surface_attach(surface, buffer.buffer, 0, 0)
    wl_surface_damage_buffer(surface, 0, 0, Int32.max, Int32.max)
    // Until one frame is shown, one frame callback at a time asks when it
    // is (the ready byte waits for it). One, kept until it is done: Mir 2.20
    // (which sends lock surfaces none) no longer gave the desktop back after
    // the unlock once we had dropped a pending callback and asked again.
    if !shown, frameCallback == nil {
      frameCallback = wl_surface_frame(surface)
      if let frameCallback { wl_callback_add_listener(frameCallback, LockListeners.frame, opaque) }
    }
    wl_surface_commit(surface)
    buffer.release()
    self.layout = layout
    drawn = state
  }
}
