/// What the D-Bus specification fixes about a message on the wire: its
/// kinds, its header fields and their types, its limits, and how long a
/// message is once its fixed header has arrived. Standard library only.
enum BusWireFormat {
  enum Kind: UInt8 {
    case methodCall = 1
    case methodReturn = 2
    case error = 3
    case signal = 4
  }

  enum Field: UInt8, CaseIterable {
    case path = 1
    case interface = 2
    case member = 3
    case errorName = 4
    case replySerial = 5
    case destination = 6
    case sender = 7
    case signature = 8
    case unixFDs = 9

    /// The type the specification gives the field's value.
    var type: Character {
      switch self {
      case .path: return "o"
      case .interface, .member, .errorName, .destination, .sender: return "s"
      case .replySerial, .unixFDs: return "u"
      case .signature: return "g"
      }
    }
  }

  /// Flags in the fixed header.
  static let noReplyExpected: UInt8 = 0x1

  /// The specification's limits: a message, an array, a signature.
  static let maximumMessageLength = 1 << 27
  static let maximumArrayLength = 1 << 26
  static let maximumSignatureLength = 255

  /// The length of the message starting at `bytes[start...]` once its
  /// fixed header is there, or nil; throws on a header that breaks the
  /// protocol (then nothing after it can be framed). Either byte order.
  static func messageLength(_ bytes: [UInt8], from start: Int) throws(BusError) -> Int? {
    guard bytes.count - start >= 16 else { return nil }
    guard let little = isLittleEndian(bytes[start]), bytes[start + 3] == 1 else {
      throw BusError(call: "read message", code: -BusError.protocolError, message: "not a D-Bus 1 message")
    }
    let body = Int(uint32(bytes, start + 4, littleEndian: little))
    let fields = Int(uint32(bytes, start + 12, littleEndian: little))
    guard body <= maximumMessageLength, fields <= maximumArrayLength else {
      throw BusError(call: "read message", code: -BusError.protocolError, message: "message too long")
    }
    let length = (16 + fields + 7) / 8 * 8 + body
    guard length <= maximumMessageLength else {
      throw BusError(call: "read message", code: -BusError.protocolError, message: "message too long")
    }
    return length
  }

  /// "l" or "B": the message's byte order; nil for anything else.
  static func isLittleEndian(_ mark: UInt8) -> Bool? {
    mark == UInt8(ascii: "l") ? true : mark == UInt8(ascii: "B") ? false : nil
  }

  static func uint32(_ bytes: [UInt8], _ at: Int, littleEndian: Bool) -> UInt32 {
    let value = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    return littleEndian ? value : value.byteSwapped
  }
}
