import CXKBCommon
import Glibc

/// The compositor's keymap for one keyboard, through xkbcommon: which keysym
/// and text a key gives with the modifiers in force, whether Ctrl or Caps
/// Lock is on, and which of several layouts is in force.
final class Keymap {
  private let context: OpaquePointer?
  private var keymap: OpaquePointer?
  private var state: OpaquePointer?

  init() { context = xkb_context_new(XKB_CONTEXT_NO_FLAGS) }

  deinit {
    xkb_state_unref(state)
    xkb_keymap_unref(keymap)
    xkb_context_unref(context)
  }

  /// The largest keymap taken (a full xkeyboard-config keymap is ~60 KiB).
  static let maximumSize = 1 << 20

  /// wl_keyboard.keymap with format XKB_V1: the keymap text in `fd`
  /// (`size` bytes with the NUL). Read, not mapped: a compositor's file
  /// shorter than it says (or cut short later) would fault a mapping with
  /// SIGBUS. Only as much as the file holds, up to `maximumSize`; a keymap
  /// that does not load leaves the previous one in force.
  func load(fd: Int32, size: UInt32) {
    var st = stat()
    guard size > 1, Int(size) <= Self.maximumSize, fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return }
    let length = min(Int(size), Int(st.st_size))
    guard length > 1 else { return }
    var text = [CChar](repeating: 0, count: length + 1)
    var done = 0
    while done < length {
      let n = text.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(done)) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      done += n
    }
    // The text ends at its NUL, or where the file did.
    let end = text[..<done].firstIndex(of: 0) ?? done
    guard end > 0,
      let loaded = xkb_keymap_new_from_buffer(context, text, end, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS)
    else { return }
    xkb_state_unref(state)
    xkb_keymap_unref(keymap)
    keymap = loaded
    state = xkb_state_new(loaded)
  }

  var isLoaded: Bool { state != nil }

  /// wl_keyboard.modifiers.
  func update(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
    guard let state else { return }
    xkb_state_update_mask(state, depressed, latched, locked, 0, 0, group)
  }

  var capsLock: Bool { state.map { xkb_state_mod_name_is_active($0, "Lock", XKB_STATE_MODS_LOCKED) > 0 } ?? false }

  /// The layout in force ("French"), when the keymap has more than one: a
  /// password typed blind depends on which (a single layout goes unsaid, as
  /// swaylock leaves it).
  var layoutName: String? {
    guard let keymap, let state, xkb_keymap_num_layouts(keymap) > 1 else { return nil }
    let index = xkb_state_serialize_layout(state, XKB_STATE_LAYOUT_EFFECTIVE)
    return xkb_keymap_layout_get_name(keymap, index).map { String(cString: $0) }
  }
  var control: Bool { state.map { xkb_state_mod_name_is_active($0, "Control", XKB_STATE_MODS_EFFECTIVE) > 0 } ?? false }

  /// The lock screen's keys for a press of the key with evdev code `key`.
  func keys(pressing key: UInt32, passwordField: Bool) -> [InputParser.Key] {
    guard let state else { return [] }
    let code = key &+ 8  // evdev → XKB keycode (a compositor's nonsense wraps, it does not trap)
    let keysym = xkb_state_key_get_one_sym(state, code)
    var buffer = [CChar](repeating: 0, count: 64)
    let length = Int(xkb_state_key_get_utf8(state, code, &buffer, buffer.count))
    var text = buffer.prefix(max(0, min(length, buffer.count - 1))).map { UInt8(bitPattern: $0) }
    // The text may be a password's: wiped once it is handed on.
    defer {
      explicit_bzero(&buffer, buffer.count)
      text.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }
    return KeyboardMapping.keys(keysym: keysym, evdevCode: key, text: text, control: control, passwordField: passwordField)
  }
}
