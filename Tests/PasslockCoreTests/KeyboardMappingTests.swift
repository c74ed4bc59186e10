import PasslockCore
import Testing

/// Wayland key presses → the lock screen's keys: digits by keysym and by
/// position, the password field by the keymap's text.
@Suite struct KeyboardMappingTests {
  typealias Keysym = KeyboardMapping.Keysym

  static func keys(_ keysym: UInt32, code: UInt32, text: String = "", control: Bool = false, password: Bool = false)
    -> [InputParser.Key]
  {
    KeyboardMapping.keys(keysym: keysym, evdevCode: code, text: Array(text.utf8), control: control, passwordField: password)
  }

  /// AZERTY's top row without Shift: é ( _ à on KEY_2, KEY_5, KEY_8, KEY_0.
  @Test(arguments: [
    (UInt32(0xe9), UInt32(3), "é", UInt8(2)), (0x28, 6, "(", 5), (0x5f, 9, "_", 8), (0xe0, 11, "à", 0), (0x26, 2, "&", 1),
  ])
  func azertyTopRowTypesDigitsByPosition(keysym: UInt32, code: UInt32, text: String, digit: UInt8) {
    #expect(Self.keys(keysym, code: code, text: text) == [.digit(digit)])
  }

  /// A digit's keysym wins over its position (a layout with the digits in
  /// another order), and the keypad counts with Num Lock on or off.
  @Test func keysymsBeforePositionsAndTheKeypad() {
    #expect(Self.keys(0x37, code: 2, text: "7") == [.digit(7)])
    #expect(Self.keys(Keysym.keypad0 + 4, code: 75, text: "4") == [.digit(4)])
    #expect(Self.keys(0xff9c, code: 79) == [.digit(1)])  // KP_End: Num Lock off
  }

  @Test func editingKeys() {
    #expect(Self.keys(Keysym.backSpace, code: 14) == [.delete])
    #expect(Self.keys(Keysym.delete, code: 111) == [.delete])
    #expect(Self.keys(Keysym.returnKey, code: 28) == [.enter])
    #expect(Self.keys(Keysym.keypadEnter, code: 96) == [.enter])
    #expect(Self.keys(Keysym.tab, code: 15) == [.alternate])
    #expect(Self.keys(Keysym.escape, code: 1) == [.escape])
    #expect(Self.keys(Keysym.lowerU, code: 22, text: "\u{15}", control: true) == [.clear])
    #expect(Self.keys(Keysym.space, code: 57, text: " ") == [.text(0x20)])
  }

  /// Letters are no digits, and Ctrl chords type nothing, even on a digit.
  @Test func lettersAndChordsTypeNothingOnTheKeypad() {
    #expect(Self.keys(0x61, code: 16, text: "a") == [])
    #expect(Self.keys(0x32, code: 3, text: "2", control: true) == [])
  }

  /// In the password field the keymap's text is typed, whatever the position.
  @Test func thePasswordFieldTakesTheKeymapsText() {
    #expect(Self.keys(0xe9, code: 3, text: "é", password: true) == [.text(0xc3), .text(0xa9)])
    #expect(Self.keys(0x32, code: 3, text: "2", password: true) == [.digit(2)])
    #expect(Self.keys(0x41, code: 30, text: "A", password: true) == [.text(0x41)])
    #expect(Self.keys(Keysym.space, code: 57, text: " ", password: true) == [.text(0x20)])
    #expect(Self.keys(Keysym.backSpace, code: 14, text: "\u{8}", password: true) == [.delete])
  }
}
