/// The lock screen's keys from what a Wayland keyboard reports for one key
/// press: the keysym and text the compositor's keymap gives it (through
/// xkbcommon), and the key's position (its evdev code). Pure, so every rule
/// is testable without a compositor.
///
/// On the passcode screen a digit counts by its keysym (0–9, KP_0–KP_9) and
/// also by its position: the top row's KEY_1…KEY_0 and the keypad's keys
/// are digits whatever the layout puts there, so on AZERTY, where the top
/// row gives & é " ' ( - è _ ç à without Shift, no Shift is needed (and the
/// keypad works with Num Lock off). In the account password field only the
/// keymap's text counts: a password is what the layout types.
public enum KeyboardMapping {
  /// The keysyms used here (xkbcommon-keysyms.h).
  public enum Keysym {
    public static let digit0: UInt32 = 0x30
    public static let space: UInt32 = 0x20
    public static let keypad0: UInt32 = 0xffb0
    public static let backSpace: UInt32 = 0xff08
    public static let tab: UInt32 = 0xff09
    public static let isoLeftTab: UInt32 = 0xfe20
    public static let returnKey: UInt32 = 0xff0d
    public static let keypadEnter: UInt32 = 0xff8d
    public static let escape: UInt32 = 0xff1b
    public static let delete: UInt32 = 0xffff
    public static let keypadDelete: UInt32 = 0xff9f
    public static let lowerU: UInt32 = 0x75
    public static let upperU: UInt32 = 0x55
  }

  /// evdev codes (linux/input-event-codes.h) of the digit keys: the top row
  /// KEY_1 (2) … KEY_9 (10), KEY_0 (11), and the keypad's.
  static let positions: [UInt32: UInt8] = [
    2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, 8: 7, 9: 8, 10: 9, 11: 0,
    79: 1, 80: 2, 81: 3, 75: 4, 76: 5, 77: 6, 71: 7, 72: 8, 73: 9, 82: 0,
  ]

  /// The keys one press stands for (a password character may be several
  /// UTF-8 bytes). `text` is the keymap's UTF-8 for the key (empty for
  /// none); `control`: Ctrl is held.
  public static func keys(keysym: UInt32, evdevCode: UInt32, text: [UInt8], control: Bool, passwordField: Bool)
    -> [InputParser.Key]
  {
    switch keysym {
    case Keysym.backSpace, Keysym.delete, Keysym.keypadDelete: return [.delete]
    case Keysym.returnKey, Keysym.keypadEnter: return [.enter]
    case Keysym.tab, Keysym.isoLeftTab: return [.alternate]
    case Keysym.escape: return [.escape]
    default: break
    }
    // Ctrl-U clears; other Ctrl chords type nothing, as on the terminal.
    if control { return keysym == Keysym.lowerU || keysym == Keysym.upperU ? [.clear] : [] }
    if passwordField {
      return text.filter { $0 >= 0x20 && $0 != 0x7f }.map { $0 >= 0x30 && $0 <= 0x39 ? .digit($0 - 0x30) : .text($0) }
    }
    if (Keysym.digit0...Keysym.digit0 + 9).contains(keysym) { return [.digit(UInt8(keysym - Keysym.digit0))] }
    if (Keysym.keypad0...Keysym.keypad0 + 9).contains(keysym) { return [.digit(UInt8(keysym - Keysym.keypad0))] }
    if let digit = positions[evdevCode] { return [.digit(digit)] }
    if keysym == Keysym.space { return [.text(0x20)] }
    return []
  }
}
