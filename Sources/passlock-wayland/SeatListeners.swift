import CWaylandClient

/// The C listener tables of a seat and its devices. Each callback captures
/// nothing: its `Seat` comes back through the `void *` data pointer
/// (`Unmanaged`, not retained: the lock keeps its seats). Only events of the
/// versions we bind (wl_seat 5) are filled in; libwayland never sends others.
///
/// The tables live for the whole process (libwayland keeps the pointer), are
/// written once before any proxy uses them, and only the one thread that
/// dispatches Wayland events reads them: hence `nonisolated(unsafe)`.
enum SeatListeners {
  static func seat(_ data: UnsafeMutableRawPointer?) -> Seat { Unmanaged<Seat>.fromOpaque(data!).takeUnretainedValue() }

  nonisolated(unsafe) static let seat: UnsafeMutablePointer<wl_seat_listener> = {
    var listener = wl_seat_listener()
    listener.capabilities = { data, _, capabilities in SeatListeners.seat(data).capabilities(capabilities) }
    listener.name = { _, _, _ in }
    return table(listener)
  }()

  nonisolated(unsafe) static let keyboard: UnsafeMutablePointer<wl_keyboard_listener> = {
    var listener = wl_keyboard_listener()
    listener.keymap = { data, _, format, fd, size in SeatListeners.seat(data).keymap(format: format, fd: fd, size: size) }
    listener.enter = { _, _, _, _, _ in }
    listener.leave = { _, _, _, _ in }
    listener.key = { data, _, _, _, key, state in
      SeatListeners.seat(data).key(key, pressed: state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue)
    }
    listener.modifiers = { data, _, _, depressed, latched, locked, group in
      SeatListeners.seat(data).modifiers(depressed: depressed, latched: latched, locked: locked, group: group)
    }
    // No key repeat: a held digit must not type a passcode by itself.
    listener.repeat_info = { _, _, _, _ in }
    return table(listener)
  }()

  nonisolated(unsafe) static let pointer: UnsafeMutablePointer<wl_pointer_listener> = {
    var listener = wl_pointer_listener()
    listener.enter = { data, _, _, surface, x, y in
      SeatListeners.seat(data).pointerEntered(surface, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
    }
    listener.leave = { data, _, _, _ in SeatListeners.seat(data).pointerLeft() }
    listener.motion = { data, _, _, x, y in SeatListeners.seat(data).pointerMoved(x: wl_fixed_to_double(x), y: wl_fixed_to_double(y)) }
    listener.button = { data, _, _, _, button, state in
      SeatListeners.seat(data).button(button, pressed: state == WL_POINTER_BUTTON_STATE_PRESSED.rawValue)
    }
    listener.axis = { _, _, _, _, _ in }
    listener.frame = { _, _ in }
    listener.axis_source = { _, _, _ in }
    listener.axis_stop = { _, _, _, _ in }
    listener.axis_discrete = { _, _, _, _ in }
    return table(listener)
  }()

  nonisolated(unsafe) static let touch: UnsafeMutablePointer<wl_touch_listener> = {
    var listener = wl_touch_listener()
    listener.down = { data, _, _, _, surface, _, x, y in
      SeatListeners.seat(data).touched(surface, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
    }
    listener.up = { _, _, _, _, _ in }
    listener.motion = { _, _, _, _, _, _ in }
    listener.frame = { _, _ in }
    listener.cancel = { _, _ in }
    return table(listener)
  }()

  /// A copy of `listener` at an address that never moves.
  static func table<Listener>(_ listener: Listener) -> UnsafeMutablePointer<Listener> {
    let table = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
    table.initialize(to: listener)
    return table
  }
}
