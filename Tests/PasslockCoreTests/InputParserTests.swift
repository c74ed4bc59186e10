import PasslockCore
import Testing

/// The terminal input parser: keys and escape sequences, a lone Escape
/// that times out without eating the next digit, overlong sequences ended.
@Suite struct InputParserTests {
  static func keys(_ bytes: [UInt8]) -> [InputParser.Key] {
    var parser = InputParser()
    return bytes.compactMap { parser.feed($0) }
  }

  static func keys(_ text: String) -> [InputParser.Key] { keys(Array(text.utf8)) }

  static let cases: [(String, String, [InputParser.Key])] = [
    ("digits", "2580", [.digit(2), .digit(5), .digit(8), .digit(0)]),
    ("backspace and DEL", "1\u{7f}2\u{8}", [.digit(1), .delete, .digit(2), .delete]),
    ("delete key", "\u{1b}[3~", [.delete]),
    ("Ctrl-U clears", "12\u{15}", [.digit(1), .digit(2), .clear]),
    ("Enter, CR or LF", "\r\n", [.enter, .enter]),
    ("keypad in application mode", "\u{1b}Op\u{1b}Oy\u{1b}OM", [.digit(0), .digit(9), .enter]),
    ("control keys are plain bytes", "\u{3}\u{1a}\u{1c}\u{4}\u{13}\u{11}", []),
    ("arrows", "\u{1b}[A\u{1b}[B\u{1b}[C\u{1b}[D\u{1b}OA", []),
    ("function keys with digits inside", "\u{1b}[15~\u{1b}[24~\u{1b}[1;5P\u{1b}[11;2~", []),
    ("Alt-digit is not a digit", "\u{1b}1\u{1b}2", []),
    ("bracketed paste of the passcode", "\u{1b}[200~2580\u{1b}[201~", []),
    ("paste containing a fake end", "\u{1b}[200~12\u{1b}[201x34\u{1b}[201~5", [.digit(5)]),
    ("OSC with BEL", "\u{1b}]0;title 1234\u{7}7", [.digit(7)]),
    ("OSC with ST", "\u{1b}]52;c;MjU4MA==\u{1b}\\8", [.digit(8)]),
    ("DCS", "\u{1b}P1$r0m\u{1b}\\9", [.digit(9)]),
    ("mouse press and release", "\u{1b}[<0;33;9M\u{1b}[<0;33;9m", [.click(column: 33, row: 9)]),
    ("right button and wheel ignored", "\u{1b}[<2;3;4M\u{1b}[<64;3;4M", []),
    ("X10 mouse report is not digits", "\u{1b}[M 05\u{1b}[M#15", [.click(column: 16, row: 21)]),
    ("unknown CSI", "\u{1b}[?1049h\u{1b}[38;5;123m3", [.digit(3)]),
    ("letters are text, never digits", "ab z", [.text(0x61), .text(0x62), .text(0x20), .text(0x7a)]),
    ("full-width digits are text bytes", "１", [.text(0xef), .text(0xbc), .text(0x91)]),
    ("Tab asks for the account password", "\t", [.alternate]),
  ]

  @Test(arguments: cases)
  func parses(_ name: String, _ input: String, _ expected: [InputParser.Key]) {
    #expect(Self.keys(input) == expected, "\(name)")
  }

  @Test func aLoneEscapeTimesOutAndDoesNotEatTheNextDigit() {
    var parser = InputParser()
    #expect(parser.feed(0x1b) == nil)
    #expect(parser.isPending)
    #expect(parser.timeOut() == .escape)
    #expect(parser.feed(0x35) == .digit(5))
    _ = parser.feed(0x1b)
    _ = parser.feed(0x5b)
    #expect(parser.timeOut() == nil, "an unfinished CSI is not the Esc key")
  }

  @Test func overlongSequencesEnd() {
    var parser = InputParser()
    for _ in 0..<10_000 { _ = parser.feed(0x31) }  // many digits: all digits
    _ = parser.feed(0x1b)
    _ = parser.feed(0x5b)
    for _ in 0..<1_000 { #expect(parser.feed(0x31) == nil) }  // parameters, never digits
    #expect(parser.feed(0x7e) == nil)
    #expect(parser.feed(0x32) == .digit(2))
  }
}
