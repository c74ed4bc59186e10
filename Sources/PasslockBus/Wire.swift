import Glibc

/// D-Bus's wire format (little-endian), the part passlockd needs: method
/// calls with basic arguments out; replies, errors and signals in, read
/// with the reader in BusMessage.swift. Alignment counts from the start of
/// the message; the body starts 8-aligned, so body offsets align the same.
enum Wire {
  enum Kind: UInt8 {
    case methodCall = 1
    case methodReturn = 2
    case error = 3
    case signal = 4
  }

  enum Field: UInt8 {
    case path = 1
    case interface = 2
    case member = 3
    case errorName = 4
    case replySerial = 5
    case destination = 6
    case sender = 7
    case signature = 8
    case unixFDs = 9
  }

  /// The specification's limit on a message: anything longer breaks the
  /// protocol. (Buses cap lower: 32 MiB by default on the system bus.)
  static let maximumLength = 1 << 27

  /// Appends values with D-Bus alignment.
  struct Writer {
    var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
      while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint32(_ value: UInt32) {
      pad(to: 4)
      withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    mutating func string(_ value: String) {
      uint32(UInt32(value.utf8.count))
      bytes += value.utf8
      bytes.append(0)
    }

    mutating func signature(_ value: String) {
      bytes.append(UInt8(value.utf8.count))
      bytes += value.utf8
      bytes.append(0)
    }
  }

  /// A method call's bytes: header, fields and body.
  static func methodCall(
    serial: UInt32, destination: String, path: String, interface: String, member: String, arguments: [BusValue]
  ) -> [UInt8] {
    var body = Writer()
    for argument in arguments {
      switch argument {
      case .string(let value), .objectPath(let value): body.string(value)
      case .bool(let value): body.uint32(value ? 1 : 0)
      case .uint32(let value): body.uint32(value)
      }
    }
    let signature = arguments.map(\.code).joined()
    var message = Writer()
    message.bytes = [UInt8(ascii: "l"), Kind.methodCall.rawValue, 0, 1]
    message.uint32(UInt32(body.bytes.count))
    message.uint32(serial)
    var fields = Writer()
    func field(_ code: Field, _ type: String, _ value: String) {
      fields.pad(to: 8)
      fields.byte(code.rawValue)
      fields.signature(type)
      if type == "g" { fields.signature(value) } else { fields.string(value) }
    }
    field(.path, "o", path)
    field(.interface, "s", interface)
    field(.member, "s", member)
    field(.destination, "s", destination)
    if !signature.isEmpty { field(.signature, "g", signature) }
    // The fields array starts at offset 16, already 8-aligned, so the
    // offsets inside `fields` are the message's minus 16.
    message.uint32(UInt32(fields.bytes.count))
    message.bytes += fields.bytes
    message.pad(to: 8)
    return message.bytes + body.bytes
  }

  /// The length of the message starting at `bytes[start...]` once its
  /// fixed header is there, or nil; throws on a header that breaks the
  /// protocol (then nothing after it can be framed). Either byte order.
  static func messageLength(_ bytes: [UInt8], from start: Int) throws(BusError) -> Int? {
    guard bytes.count - start >= 16 else { return nil }
    guard let little = isLittleEndian(bytes[start]), bytes[start + 3] == 1 else {
      throw BusError(call: "read message", code: -EPROTO, name: nil, message: "not a D-Bus 1 message")
    }
    let body = Int(uint32(bytes, start + 4, littleEndian: little))
    let fields = Int(uint32(bytes, start + 12, littleEndian: little))
    let length = (16 + fields + 7) / 8 * 8 + body
    guard length <= maximumLength else {
      throw BusError(call: "read message", code: -EMSGSIZE, name: nil, message: "message too long")
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

extension BusValue {
  var code: String {
    switch self {
    case .string: return "s"
    case .objectPath: return "o"
    case .bool: return "b"
    case .uint32: return "u"
    }
  }
}
