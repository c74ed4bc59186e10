/// Writes the messages passlockd sends: method calls with basic arguments,
/// and the replies (a return or an error) to calls made to it. Little-endian, aligned from the
/// start of the message (the body starts 8-aligned, so body offsets align the
/// same). Standard library only.
struct BusMessageWriter {
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

  /// A method call's bytes: header, fields and body.
  static func methodCall(
    serial: UInt32, destination: String, path: String, interface: String, member: String, arguments: [BusValue]
  ) -> [UInt8] {
    message(
      .methodCall, serial: serial,
      fields: [(.path, path), (.interface, interface), (.member, member), (.destination, destination)],
      arguments: arguments)
  }

  /// The return of call `replySerial` from `destination`.
  static func methodReturn(serial: UInt32, replySerial: UInt32, destination: String, arguments: [BusValue]) -> [UInt8] {
    message(.methodReturn, serial: serial, fields: [(.destination, destination)], replySerial: replySerial, arguments: arguments)
  }

  /// An error answering call `replySerial` from `destination` (a method
  /// passlockd does not offer, or one that refused).
  static func errorReply(serial: UInt32, replySerial: UInt32, destination: String, name: String, text: String) -> [UInt8] {
    message(
      .error, serial: serial, fields: [(.errorName, name), (.destination, destination)], replySerial: replySerial,
      arguments: [.string(text)])
  }

  private static func message(
    _ kind: BusWireFormat.Kind, serial: UInt32, fields named: [(BusWireFormat.Field, String)], replySerial: UInt32? = nil,
    arguments: [BusValue]
  ) -> [UInt8] {
    var body = BusMessageWriter()
    for argument in arguments {
      switch argument {
      case .string(let value), .objectPath(let value): body.string(value)
      case .bool(let value): body.uint32(value ? 1 : 0)
      case .uint32(let value): body.uint32(value)
      }
    }
    let signature = arguments.map { $0.code }.joined()
    var message = BusMessageWriter()
    message.bytes = [UInt8(ascii: "l"), kind.rawValue, 0, 1]
    message.uint32(UInt32(body.bytes.count))
    message.uint32(serial)
    // The fields array starts at offset 16, already 8-aligned, so the
    // offsets inside `fields` are the message's minus 16.
    var fields = BusMessageWriter()
    func field(_ code: BusWireFormat.Field, _ write: (inout BusMessageWriter) -> Void) {
      fields.pad(to: 8)
      fields.byte(code.rawValue)
      fields.signature(String(code.type))
      write(&fields)
    }
    for (code, value) in named { field(code) { $0.string(value) } }
    if let replySerial { field(.replySerial) { $0.uint32(replySerial) } }
    if !signature.isEmpty { field(.signature) { $0.signature(signature) } }
    message.uint32(UInt32(fields.bytes.count))
    message.bytes += fields.bytes
    message.pad(to: 8)
    return message.bytes + body.bytes
  }
}

/// A basic value to send.
public enum BusValue {
  case string(String)
  case objectPath(String)
  case bool(Bool)
  case uint32(UInt32)

  var code: String {
    switch self {
    case .string: return "s"
    case .objectPath: return "o"
    case .bool: return "b"
    case .uint32: return "u"
    }
  }
}
