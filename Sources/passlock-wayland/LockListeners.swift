import CSessionLock
import CWaylandClient

/// The C listener tables of the registry, the outputs, their frame
/// callbacks and the session lock.
/// Each callback captures nothing: its object comes back through the
/// `void *` data pointer (`Unmanaged`, not retained: `WaylandLock` keeps its
/// outputs, and itself lives for the whole run). Only events of the versions
/// we bind (wl_output 4) are filled in.
///
/// The tables live for the whole process (libwayland keeps the pointer), are
/// written once before any proxy uses them, and only the one thread that
/// dispatches Wayland events reads them: hence `nonisolated(unsafe)`.
enum LockListeners {
  static func lock(_ data: UnsafeMutableRawPointer?) -> WaylandLock {
    Unmanaged<WaylandLock>.fromOpaque(data!).takeUnretainedValue()
  }

  static func output(_ data: UnsafeMutableRawPointer?) -> OutputSurface {
    Unmanaged<OutputSurface>.fromOpaque(data!).takeUnretainedValue()
  }

  nonisolated(unsafe) static let registry: UnsafeMutablePointer<wl_registry_listener> = {
    var listener = wl_registry_listener()
    listener.global = { data, _, name, interface, version in
      LockListeners.lock(data).global(name: name, interface: String(cString: interface!), version: version)
    }
    listener.global_remove = { data, _, name in LockListeners.lock(data).globalRemoved(name: name) }
    return SeatListeners.table(listener)
  }()

  nonisolated(unsafe) static let output: UnsafeMutablePointer<wl_output_listener> = {
    var listener = wl_output_listener()
    listener.geometry = { _, _, _, _, _, _, _, _, _, _ in }
    listener.mode = { _, _, _, _, _, _ in }
    listener.done = { data, _ in LockListeners.output(data).done() }
    listener.scale = { data, _, factor in LockListeners.output(data).scaleChanged(factor) }
    listener.name = { _, _, _ in }
    listener.description = { _, _, _ in }
    return SeatListeners.table(listener)
  }()

  nonisolated(unsafe) static let sessionLock: UnsafeMutablePointer<ext_session_lock_v1_listener> = {
    var listener = ext_session_lock_v1_listener()
    listener.locked = { data, _ in LockListeners.lock(data).lockedEvent() }
    listener.finished = { data, _ in LockListeners.lock(data).finishedEvent() }
    return SeatListeners.table(listener)
  }()

  nonisolated(unsafe) static let frame: UnsafeMutablePointer<wl_callback_listener> = {
    var listener = wl_callback_listener()
    listener.done = { data, _, _ in LockListeners.output(data).frameShown() }
    return SeatListeners.table(listener)
  }()

  nonisolated(unsafe) static let lockSurface: UnsafeMutablePointer<ext_session_lock_surface_v1_listener> = {
    var listener = ext_session_lock_surface_v1_listener()
    listener.configure = { data, _, serial, width, height in
      LockListeners.output(data).configure(serial: serial, width: width, height: height)
    }
    return SeatListeners.table(listener)
  }()
}
