/// Turns the bytes a terminal sends into the few keys the lock screen knows.
///
/// Everything that is not a key we use — escape sequences (arrows, function
/// keys, unknown CSI/OSC/DCS), Alt-combinations, control bytes and whatever
/// arrives inside a bracketed paste — is consumed and dropped, never taken as a
/// digit. A pasted passcode therefore does nothing.
public struct InputParser: Sendable {
  public enum Key: Equatable, Sendable {
    case digit(UInt8)  // 0...9
    case delete
    case clear
    case enter
    /// Mouse button 1 pressed at a 1-based column and row (SGR 1006 report).
    case click(column: Int, row: Int)
    /// A printable byte that is not a digit (letters, punctuation, UTF-8):
    /// only the account password field takes these.
    case text(UInt8)
    /// Tab: switch to the account password field.
    case alternate
    /// Esc pressed on its own (reported once the sequence timed out).
    case escape
  }

  enum State: Sendable {
    case ground
    case escape
    case csi(parameters: [UInt8])
    case ss3
    /// OSC, DCS, SOS, PM, APC: skip until ST (ESC \) or BEL.
    case string(sawEscape: Bool)
    case paste(matched: Int)
    /// A legacy (X10) mouse report: three raw bytes follow ESC [ M.
    case x10Mouse(collected: [UInt8])
  }

  private var state = State.ground
  public init() {}

  /// True while an escape sequence is incomplete; after a short quiet time the
  /// caller calls `timeOut()` so a lone Esc press does not swallow the next key.
  public var isPending: Bool {
    switch state {
    case .ground, .paste: return false
    default: return true
    }
  }

  /// Ends an incomplete sequence; a lone Esc becomes the Esc key.
  public mutating func timeOut() -> Key? {
    guard isPending else { return nil }
    defer { state = .ground }
    if case .escape = state { return .escape }
    return nil
  }

  private static let pasteEnd: [UInt8] = Array("\u{1b}[201~".utf8)

  public mutating func feed(_ byte: UInt8) -> Key? {
    switch state {
    case .ground:
      switch byte {
      case 0x30...0x39: return .digit(byte - 0x30)
      case 0x7f, 0x08: return .delete
      case 0x15: return .clear  // Ctrl-U
      case 0x0d, 0x0a: return .enter
      case 0x09: return .alternate
      case 0x1b: state = .escape
      case 0x20...0x7e, 0x80...0xff: return .text(byte)
      default: break  // every other control byte (Ctrl-C, Ctrl-Z, Ctrl-\, Ctrl-D, Ctrl-S/Q) is ignored
      }
    case .escape:
      switch byte {
      case 0x5b: state = .csi(parameters: [])  // [
      case 0x4f: state = .ss3  // O
      case 0x5d, 0x50, 0x58, 0x5e, 0x5f: state = .string(sawEscape: false)  // ] P X ^ _
      case 0x1b: state = .escape
      default: state = .ground  // Alt-x: dropped whole
      }
    case .ss3:
      state = .ground
      // The numeric keypad in application mode: ESC O p..y are 0..9, ESC O M is Enter.
      if (0x70...0x79).contains(byte) { return .digit(byte - 0x70) }
      if byte == 0x4d { return .enter }
    case .csi(var parameters):
      if (0x40...0x7e).contains(byte) {
        state = .ground
        return Self.csiKey(parameters, final: byte, parser: &self)
      }
      if (0x20...0x3f).contains(byte) && parameters.count < 64 {
        parameters.append(byte)
        state = .csi(parameters: parameters)
      } else if !(0x20...0x3f).contains(byte) {
        state = byte == 0x1b ? .escape : .ground  // malformed: abandon the sequence
      }
    case .string(let sawEscape):
      if byte == 0x07 || (sawEscape && byte == 0x5c) { state = .ground } else { state = .string(sawEscape: byte == 0x1b) }
    case .x10Mouse(var collected):
      // Raw coordinate bytes: 48–57 are columns 16–25, not digits.
      collected.append(byte)
      guard collected.count == 3 else {
        state = .x10Mouse(collected: collected)
        return nil
      }
      state = .ground
      let button = Int(collected[0]) - 32
      return button == 0 ? .click(column: Int(collected[1]) - 32, row: Int(collected[2]) - 32) : nil
    case .paste(let matched):
      // Inside a bracketed paste everything is dropped until ESC [ 2 0 1 ~.
      if byte == Self.pasteEnd[matched] {
        state = matched + 1 == Self.pasteEnd.count ? .ground : .paste(matched: matched + 1)
      } else {
        state = .paste(matched: byte == Self.pasteEnd[0] ? 1 : 0)
      }
    }
    return nil
  }

  private static func csiKey(_ parameters: [UInt8], final: UInt8, parser: inout InputParser) -> Key? {
    let text = String(decoding: parameters, as: UTF8.self)
    switch final {
    case 0x7e where text == "3": return .delete  // Delete key
    case 0x7e where text == "200":
      parser.state = .paste(matched: 0)
      return nil
    case 0x4d where text.isEmpty:  // ESC [ M: an X10 mouse report, three raw bytes follow
      parser.state = .x10Mouse(collected: [])
      return nil
    case 0x4d where text.hasPrefix("<"):  // SGR mouse press: ESC [ < b ; x ; y M
      let fields = text.dropFirst().split(separator: ";").map { Int($0) }
      guard fields.count == 3, let button = fields[0], let column = fields[1], let row = fields[2] else { return nil }
      return button == 0 ? .click(column: column, row: row) : nil
    default:
      return nil
    }
  }
}
