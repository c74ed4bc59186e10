import CCairo
import CLinux
import CWaylandClient
import Glibc

/// One frame's pixels in shared memory (a memfd), as a `wl_buffer` the
/// compositor reads and a cairo image surface we draw into.
///
/// Made for one commit: once attached and committed, `release()` destroys
/// our side (the `wl_buffer`, the pool, the mapping and the descriptor). The
/// compositor keeps what it needs of the memory until it has shown the
/// next frame, and the lock screen holds no frame-sized buffer while it
/// waits for keys (swaylock does the same with its background).
struct ShmBuffer {
  let lib: DrawingLibrary
  let buffer: OpaquePointer
  let cairo: OpaquePointer
  private let surface: OpaquePointer
  private let data: UnsafeMutableRawPointer
  private let size: Int

  /// A `width`×`height` ARGB8888 buffer (device pixels), or nil when the
  /// memory cannot be had (the frame is then skipped, the lock stands).
  init?(shm: OpaquePointer, width: Int32, height: Int32, lib: DrawingLibrary) {
    let stride = width * 4
    let size = Int(stride) * Int(height)
    let fd = passlock_memfd_create("passlock-wayland")
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard ftruncate(fd, off_t(size)) == 0 else { return nil }
    guard let data = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), data != MAP_FAILED else { return nil }
    guard let pool = wl_shm_create_pool(shm, fd, Int32(size)) else {
      munmap(data, size)
      return nil
    }
    buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_ARGB8888.rawValue)
    // The buffer keeps the pool's memory; the pool object itself is not needed.
    wl_shm_pool_destroy(pool)
    self.lib = lib
    // cairo returns an object in an error state rather than NULL.
    surface = lib.imageSurfaceCreateForData(
      data.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32, width, height, stride)!
    cairo = lib.create(surface)!
    self.data = data
    self.size = size
  }

  /// Drawing done: cairo's pending work reaches the memory.
  func flush() { lib.surfaceFlush(surface) }

  /// After the commit: everything of ours goes.
  func release() {
    lib.destroy(cairo)
    lib.surfaceDestroy(surface)
    wl_buffer_destroy(buffer)
    munmap(data, size)
  }
}
