import CWaylandClient
import Glibc

/// One `wl_seat`: its keyboard (keys through the compositor's keymap), its
/// pointer and its touch screen (clicks and taps on the keypad), delivered to
/// the lock screen. Its listeners are `SeatListeners`'.
final class Seat {
  let seat: OpaquePointer
  let name: UInt32
  unowned(unsafe) let lock: WaylandLock
  private var keyboard: OpaquePointer?
  private var pointer: OpaquePointer?
  private var touch: OpaquePointer?
  let keymap = Keymap()
  /// The pointer's surface and position on it (logical pixels).
  private var pointerSurface: OpaquePointer?
  private var pointerX = 0.0
  private var pointerY = 0.0

  init(seat: OpaquePointer, name: UInt32, lock: WaylandLock) {
    self.seat = seat
    self.name = name
    self.lock = lock
  }

  deinit {
    if let keyboard { wl_keyboard_destroy(keyboard) }
    if let pointer { wl_pointer_destroy(pointer) }
    if let touch { wl_touch_destroy(touch) }
    wl_seat_destroy(seat)
  }

  var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

  /// wl_seat.capabilities: take the devices it has now, drop the others.
  func capabilities(_ capabilities: UInt32) {
    let hasKeyboard = capabilities & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
    if hasKeyboard, keyboard == nil, let device = wl_seat_get_keyboard(seat) {
      keyboard = device
      wl_keyboard_add_listener(device, SeatListeners.keyboard, opaque)
    } else if !hasKeyboard, let device = keyboard {
      wl_keyboard_destroy(device)
      keyboard = nil
    }
    let hasPointer = capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0
    if hasPointer, pointer == nil, let device = wl_seat_get_pointer(seat) {
      pointer = device
      wl_pointer_add_listener(device, SeatListeners.pointer, opaque)
    } else if !hasPointer, let device = pointer {
      wl_pointer_destroy(device)
      pointer = nil
    }
    let hasTouch = capabilities & WL_SEAT_CAPABILITY_TOUCH.rawValue != 0
    if hasTouch, touch == nil, let device = wl_seat_get_touch(seat) {
      touch = device
      wl_touch_add_listener(device, SeatListeners.touch, opaque)
    } else if !hasTouch, let device = touch {
      wl_touch_destroy(device)
      touch = nil
    }
  }

  // MARK: Keyboard

  /// wl_keyboard.keymap. Only XKB_V1 is a keymap; NO_KEYMAP (sent when a
  /// virtual keyboard goes away) is not a reason to stop, and keeps the one
  /// we have (swaylock 1.8.2 exited on it, abandoning its lock).
  func keymap(format: UInt32, fd: Int32, size: UInt32) {
    defer { close(fd) }
    guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue else { return }
    keymap.load(fd: fd, size: size)
  }

  /// evdev's KEY_POWER, KEY_SLEEP, KEY_WAKEUP, KEY_SUSPEND.
  static let sleepKeys: Set<UInt32> = [116, 142, 143, 205]

  func key(_ key: UInt32, pressed: Bool) {
    guard pressed else { return }
    // Within an idle lock's grace any key gives the session back, a letter
    // or Shift too (the keypad maps only digits); never the keys that put
    // the machine to sleep, which reach the lock surface as they do it.
    if !Self.sleepKeys.contains(key) && lock.releaseInGrace() { return }
    var keys = keymap.keys(pressing: key, passwordField: lock.passwordField)
    for typed in keys { lock.press(typed) }
    // What was typed lives on in the Secret only (the keys are plain values).
    keys.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
  }

  func modifiers(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
    // Caps Lock shows in the password field with the next frame.
    keymap.update(depressed: depressed, latched: latched, locked: locked, group: group)
  }

  // MARK: Pointer and touch

  func pointerEntered(_ surface: OpaquePointer?, x: Double, y: Double) {
    pointerSurface = surface
    pointerX = x
    pointerY = y
  }

  func pointerMoved(x: Double, y: Double) {
    pointerX = x
    pointerY = y
  }

  func pointerLeft() { pointerSurface = nil }

  /// BTN_LEFT (linux/input-event-codes.h) pressed: a click on the keypad.
  func button(_ button: UInt32, pressed: Bool) {
    guard pressed, button == 0x110, let pointerSurface else { return }
    lock.click(on: pointerSurface, x: pointerX, y: pointerY)
  }

  func touched(_ surface: OpaquePointer?, x: Double, y: Double) {
    guard let surface else { return }
    lock.click(on: surface, x: x, y: y)
  }
}
