/// A received message, checked whole when it is parsed and read back in
/// order with typed readers, the way sd-bus's sd_bus_message_read_basic
/// reads: every read names the type it wants, and a read that does not match
/// the signature throws instead of reinterpreting bytes. Standard library
/// only (descriptors are indices; BusInput owns the descriptors themselves),
/// so the reader is fuzzed on its own (Fuzz/BusMessageFuzz.swift).
///
/// Checked at parse time, as the specification requires of a receiver:
/// the fixed header, every header field's type, the fields each kind needs,
/// the signature's grammar, and the whole body against it: alignment padding
/// is zero, strings are UTF-8 without NUL and end in NUL, booleans are 0 or
/// 1, object paths and signatures are well formed, arrays fit the message
/// and 64 MiB, nesting stays within 64 levels, and nothing follows the last
/// value. A message that fails any of it is dropped by the caller.
public final class BusMessage {
  let kind: BusWireFormat.Kind
  let flags: UInt8
  let serial: UInt32
  let littleEndian: Bool
  let fields: [UInt8: String]
  let replySerial: UInt32?
  let body: [UInt8]
  /// How many descriptors its UNIX_FDS field says came with it.
  let descriptorCount: Int
  private var position = 0
  /// Open containers, innermost last; the outermost is the body itself.
  private var containers: [Container]

  private struct Container {
    /// The complete types still to read here (an array repeats its element).
    var types: ArraySlice<String>
    /// An array's element type and where it ends.
    var array: (element: String, end: Int)?
  }

  public var path: String? { fields[BusWireFormat.Field.path.rawValue] }
  public var member: String? { fields[BusWireFormat.Field.member.rawValue] }
  var interface: String? { fields[BusWireFormat.Field.interface.rawValue] }
  /// Who sent it: a unique name (":1.42"), or the bus itself.
  public var sender: String? { fields[BusWireFormat.Field.sender.rawValue] }
  var destination: String? { fields[BusWireFormat.Field.destination.rawValue] }
  var errorName: String? { fields[BusWireFormat.Field.errorName.rawValue] }
  var signature: String { fields[BusWireFormat.Field.signature.rawValue] ?? "" }
  /// A method return or an error: an answer to a call.
  var isReply: Bool { kind == .methodReturn || kind == .error }
  var expectsReply: Bool { kind == .methodCall && flags & BusWireFormat.noReplyExpected == 0 }

  /// Parses and checks one whole message (as BusWireFormat.messageLength framed it).
  init(parsing bytes: ArraySlice<UInt8>) throws(BusError) {
    let bytes = Array(bytes)
    guard bytes.count >= 16, let little = BusWireFormat.isLittleEndian(bytes[0]), bytes[3] == 1 else {
      throw .malformed("no D-Bus 1 header")
    }
    guard let kind = BusWireFormat.Kind(rawValue: bytes[1]) else { throw .malformed("unknown message type \(bytes[1])") }
    littleEndian = little
    self.kind = kind
    flags = bytes[2]
    serial = BusWireFormat.uint32(bytes, 8, littleEndian: little)
    guard serial != 0 else { throw .malformed("serial 0") }
    var header = BusValueReader(bytes: bytes, position: 12, littleEndian: little)
    let fieldsLength = Int(try header.uint32())
    let fieldsEnd = header.position + fieldsLength
    guard fieldsEnd <= bytes.count else { throw .malformed("header fields longer than the message") }
    var fields: [UInt8: String] = [:]
    var numbers: [UInt8: UInt32] = [:]
    while header.position < fieldsEnd {
      try header.align(8)
      let code = try header.byte()
      let type = try header.signature()
      guard BusSignature.isSingleCompleteType(type) else { throw .malformed("header field \(code) of type '\(type)'") }
      guard let field = BusWireFormat.Field(rawValue: code) else {
        try header.skip(Substring(type), depth: 1)  // unknown fields are ignored, as the specification says
        continue
      }
      guard type == String(field.type) else { throw .malformed("header field \(field) of type '\(type)'") }
      guard fields[code] == nil && numbers[code] == nil else { throw .malformed("header field \(field) twice") }
      switch field.type {
      case "o": fields[code] = try header.objectPath()
      case "g": fields[code] = try header.signature()
      case "s": fields[code] = try header.string()
      default: numbers[code] = try header.uint32()
      }
    }
    guard header.position == fieldsEnd else { throw .malformed("header fields end inside a value") }
    try header.align(8)
    self.fields = fields
    replySerial = numbers[BusWireFormat.Field.replySerial.rawValue]
    descriptorCount = Int(numbers[BusWireFormat.Field.unixFDs.rawValue] ?? 0)
    try Self.checkRequiredFields(kind, fields, replySerial)
    body = Array(bytes[header.position...])
    guard body.count == Int(BusWireFormat.uint32(bytes, 4, littleEndian: little)) else {
      throw .malformed("body length does not match the header")
    }
    let types = try BusSignature.split(fields[BusWireFormat.Field.signature.rawValue] ?? "")
    containers = [Container(types: types[...], array: nil)]
    // The whole body against its signature, now: reads later only walk it.
    var check = BusValueReader(bytes: body, position: 0, littleEndian: little, descriptors: descriptorCount)
    for type in types { try check.skip(Substring(type), depth: 0) }
    guard check.position == body.count else { throw .malformed("bytes after the last value") }
  }

  /// The fields the specification requires of each kind.
  private static func checkRequiredFields(
    _ kind: BusWireFormat.Kind, _ fields: [UInt8: String], _ replySerial: UInt32?
  ) throws(BusError) {
    let has = { (field: BusWireFormat.Field) in fields[field.rawValue] != nil }
    switch kind {
    case .methodCall: guard has(.path), has(.member) else { throw .malformed("a method call without path or member") }
    case .signal: guard has(.path), has(.interface), has(.member) else { throw .malformed("a signal without path, interface or member") }
    case .error: guard has(.errorName), replySerial != nil else { throw .malformed("an error without name or reply serial") }
    case .methodReturn: guard replySerial != nil else { throw .malformed("a reply without reply serial") }
    }
  }

  private func valueReader() -> BusValueReader {
    BusValueReader(bytes: body, position: position, littleEndian: littleEndian, descriptors: descriptorCount)
  }

  /// Back to the start of the body (each handler reads a signal from the start).
  func rewind() {
    position = 0
    containers = [Container(types: ((try? BusSignature.split(signature)) ?? [])[...], array: nil)]
  }

  /// The next complete type to read in the innermost container, taken;
  /// throws, taking nothing, unless it starts with `code` (where given).
  private func take(_ code: Character?) throws(BusError) -> String {
    let type = try peek()
    if let code, type.first != code {
      throw .malformed("read '\(code)' where the signature has '\(type)'")
    }
    if containers[containers.count - 1].array == nil { containers[containers.count - 1].types.removeFirst() }
    return type
  }

  /// The next complete type, not taken.
  private func peek() throws(BusError) -> String {
    guard let container = containers.last else { throw .malformed("read outside the body") }
    if let array = container.array {
      guard position < array.end else { throw .malformed("read past the end of an array") }
      return array.element
    }
    guard let next = container.types.first else { throw .malformed("read past the last value") }
    return next
  }

  private func read<T>(_ code: Character, _ body: (inout BusValueReader) throws(BusError) -> T) throws(BusError) -> T {
    _ = try take(code)
    var reader = valueReader()
    let value = try body(&reader)
    position = reader.position
    return value
  }

  public func string() throws(BusError) -> String { try read("s") { (r) throws(BusError) in try r.string() } }
  public func objectPath() throws(BusError) -> String { try read("o") { (r) throws(BusError) in try r.objectPath() } }
  public func bool() throws(BusError) -> Bool { try read("b") { (r) throws(BusError) in try r.boolean() } }
  public func uint32() throws(BusError) -> UInt32 { try read("u") { (r) throws(BusError) in try r.uint32() } }
  public func uint64() throws(BusError) -> UInt64 { try read("t") { (r) throws(BusError) in try r.uint64() } }

  /// A descriptor's index among those that came with the message (the
  /// receiver holds the descriptors themselves).
  public func unixFD() throws(BusError) -> Int {
    try read("h") { (r) throws(BusError) in try r.unixFD() }
  }

  /// Skips the next value, whatever its type.
  func skipValue() throws(BusError) {
    let type = try take(nil)
    var reader = valueReader()
    try reader.skip(Substring(type), depth: 0)
    position = reader.position
  }

  /// Enters a variant: the next read is its value, of the type returned.
  @discardableResult
  public func enterVariant() throws(BusError) -> String {
    let type = try read("v") { (r) throws(BusError) in try r.signature() }
    containers.append(Container(types: [type], array: nil))
    return type
  }

  /// Enters an array ("a", element type) or a struct or dict entry ("r",
  /// its field types); false, for "r", at the end of the enclosing array.
  public func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
    switch type {
    case "a":
      guard try peek() == "a" + contents else { throw .malformed("read 'a\(contents)' where the signature has '\(try peek())'") }
      _ = try take("a")
      var reader = valueReader()
      let length = Int(try reader.uint32())
      try reader.align(BusSignature.alignment(of: Substring(contents)))
      position = reader.position
      containers.append(Container(types: [], array: (contents, reader.position + length)))
      return true
    case "r":
      if let array = containers.last?.array, position >= array.end { return false }
      let next = try peek()
      guard next.first == "(" || next.first == "{", next.dropFirst().dropLast() == contents else {
        throw .malformed("read '(\(contents))' where the signature has '\(next)'")
      }
      _ = try take(nil)
      var reader = valueReader()
      try reader.align(8)
      position = reader.position
      containers.append(Container(types: try BusSignature.split(contents)[...], array: nil))
      return true
    default:
      throw .malformed("cannot enter '\(type)'")
    }
  }

  /// Leaves the innermost container, skipping what was not read of it.
  public func exit() throws(BusError) {
    guard containers.count > 1, let container = containers.popLast() else { throw .malformed("exit without a container") }
    var reader = valueReader()
    if let array = container.array {
      reader.position = array.end
    } else {
      for type in container.types { try reader.skip(Substring(type), depth: 0) }
    }
    position = reader.position
  }

  /// A variant's value, for the types a property has: basic values and
  /// structs of them; anything else is skipped and read as `.other`.
  public func variant() throws(BusError) -> BusProperty {
    let type = try enterVariant()
    let value = try value(of: type)
    try exit()
    return value
  }

  private func value(of type: String) throws(BusError) -> BusProperty {
    switch type {
    case "s": return .string(try string())
    case "o": return .objectPath(try objectPath())
    case "b": return .bool(try bool())
    case "u": return .uint32(try uint32())
    case "t": return .uint64(try uint64())
    default:
      guard type.hasPrefix("(") else {
        try skipValue()
        return .other
      }
      let contents = String(type.dropFirst().dropLast())
      _ = try enter("r", contents)
      var values: [BusProperty] = []
      for field in try BusSignature.split(contents) { values.append(try value(of: field)) }
      try exit()
      return .structure(values)
    }
  }

  /// An `a{sv}` dictionary (GetAll's answer, PropertiesChanged's changes).
  public func properties() throws(BusError) -> [String: BusProperty] {
    var found: [String: BusProperty] = [:]
    guard try enter("a", "{sv}") else { return found }
    while try enter("r", "sv") {
      let name = try string()
      found[name] = try variant()
      try exit()
    }
    try exit()
    return found
  }

  /// An `as` array (PropertiesChanged's invalidated names).
  public func strings() throws(BusError) -> [String] {
    var found: [String] = []
    _ = try enter("a", "s")
    while let array = containers.last?.array, position < array.end { found.append(try string()) }
    try exit()
    return found
  }
}

/// A property's value as read from a variant.
public enum BusProperty: Equatable, Sendable {
  case string(String)
  case objectPath(String)
  case bool(Bool)
  case uint32(UInt32)
  case uint64(UInt64)
  case structure([BusProperty])
  /// A type passlockd does not read (skipped).
  case other

  public var string: String? {
    switch self {
    case .string(let value), .objectPath(let value): return value
    default: return nil
    }
  }
  public var bool: Bool? { if case .bool(let value) = self { return value } else { return nil } }
  public var uint32: UInt32? { if case .uint32(let value) = self { return value } else { return nil } }
  public var uint64: UInt64? { if case .uint64(let value) = self { return value } else { return nil } }
}
