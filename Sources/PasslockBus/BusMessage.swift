import Glibc

/// A received message: its header fields, and its body read in order with
/// the typed readers (the caller knows the signature it asked for; every
/// read is bounds-checked, so a malformed message throws, never traps).
public final class BusMessage {
  let kind: Wire.Kind
  let serial: UInt32
  let littleEndian: Bool
  let fields: [UInt8: String]
  let replySerial: UInt32?
  let body: [UInt8]
  /// How many descriptors its UNIX_FDS field says came with it.
  let descriptorCount: Int
  /// Those descriptors, once BusInput has attached them; closed with it.
  private(set) var descriptors: [Int32] = []
  private var position = 0
  /// Open containers: an array's end, or a struct's or variant's remaining field types.
  private var containers: [Container] = []

  private enum Container {
    case array(end: Int)
    case fields([String])
  }

  public var path: String? { fields[Wire.Field.path.rawValue] }
  public var member: String? { fields[Wire.Field.member.rawValue] }
  var interface: String? { fields[Wire.Field.interface.rawValue] }
  var sender: String? { fields[Wire.Field.sender.rawValue] }
  var errorName: String? { fields[Wire.Field.errorName.rawValue] }
  var signature: String { fields[Wire.Field.signature.rawValue] ?? "" }

  /// Parses one whole message; its descriptors are attached afterwards
  /// (`adopt`), by whoever received them.
  init(parsing bytes: ArraySlice<UInt8>) throws(BusError) {
    let bytes = Array(bytes)
    guard bytes.count >= 16, let little = Wire.isLittleEndian(bytes[0]) else { throw BusError.malformed("no header") }
    littleEndian = little
    var header = BusReader(bytes: bytes, position: 12, littleEndian: little)
    guard let kind = Wire.Kind(rawValue: bytes[1]) else { throw BusError.malformed("unknown message type \(bytes[1])") }
    self.kind = kind
    serial = Wire.uint32(bytes, 8, littleEndian: little)
    let fieldsLength = Int(try header.uint32())
    let fieldsEnd = header.position + fieldsLength
    var fields: [UInt8: String] = [:]
    var replySerial: UInt32?
    var fdCount = 0
    while header.position < fieldsEnd {
      try header.align(8)
      let code = try header.byte()
      let type = try header.signature()
      switch type {
      case "s", "o": fields[code] = try header.string()
      case "g": fields[code] = try header.signature()
      case "u":
        let value = try header.uint32()
        if code == Wire.Field.replySerial.rawValue { replySerial = value }
        if code == Wire.Field.unixFDs.rawValue { fdCount = Int(value) }
      default: try header.skip(type)
      }
    }
    self.fields = fields
    self.replySerial = replySerial
    let bodyStart = (fieldsEnd + 7) / 8 * 8
    guard bodyStart <= bytes.count else { throw BusError.malformed("header longer than the message") }
    body = Array(bytes[bodyStart...])
    descriptorCount = fdCount
  }

  deinit { for fd in descriptors { close(fd) } }

  /// Takes ownership of the descriptors that came with the message.
  func adopt(_ fds: [Int32]) { descriptors = fds }

  private func reader() -> BusReader { BusReader(bytes: body, position: position, littleEndian: littleEndian) }

  /// Back to the start of the body (each handler reads a signal from the start).
  func rewind() {
    position = 0
    containers = []
  }

  /// Reads one value of `type` through `read`, keeping struct bookkeeping.
  private func next<T>(_ read: (inout BusReader) throws(BusError) -> T) throws(BusError) -> T {
    if case .fields(var remaining) = containers.last {
      guard !remaining.isEmpty else { throw BusError.malformed("read past the end of a struct") }
      remaining.removeFirst()
      containers[containers.count - 1] = .fields(remaining)
    }
    var reader = reader()
    let value = try read(&reader)
    position = reader.position
    return value
  }

  public func string() throws(BusError) -> String { try next { (r) throws(BusError) in try r.string() } }
  public func objectPath() throws(BusError) -> String { try next { (r) throws(BusError) in try r.string() } }
  public func bool() throws(BusError) -> Bool { try next { (r) throws(BusError) in try r.uint32() != 0 } }
  public func uint32() throws(BusError) -> UInt32 { try next { (r) throws(BusError) in try r.uint32() } }
  public func uint64() throws(BusError) -> UInt64 { try next { (r) throws(BusError) in try r.uint64() } }

  /// A file descriptor from the message, duplicated (close-on-exec) so it
  /// outlives the message.
  public func fileDescriptor() throws(BusError) -> Int32 {
    let index = Int(try next { (r) throws(BusError) in try r.uint32() })
    guard index < descriptors.count else { throw BusError.malformed("descriptor index out of range") }
    let copy = fcntl(descriptors[index], F_DUPFD_CLOEXEC, 3)
    guard copy >= 0 else { throw BusError(call: "dup inhibitor fd", code: -errno) }
    return copy
  }

  /// Enters a variant: the next read is its value (of the type returned).
  @discardableResult
  public func enterVariant() throws(BusError) -> String {
    let type = try next { (r) throws(BusError) in try r.signature() }
    containers.append(.fields([type]))
    return type
  }

  /// A variant's value, for the types a property has: basic values and
  /// structs of them; anything else is skipped and read as `.other`.
  public func variant() throws(BusError) -> BusProperty {
    let type = try enterVariant()
    defer { _ = try? exit() }
    return try value(of: type)
  }

  private func value(of type: String) throws(BusError) -> BusProperty {
    switch type {
    case "s": return .string(try string())
    case "o": return .objectPath(try objectPath())
    case "b": return .bool(try bool())
    case "u": return .uint32(try uint32())
    case "t": return .uint64(try uint64())
    default:
      guard type.hasPrefix("("), type.hasSuffix(")") else { return .other }
      let fields = try BusReader.split(String(type.dropFirst().dropLast()))
      _ = try enter("r", String(type.dropFirst().dropLast()))
      var values: [BusProperty] = []
      for field in fields { values.append(try value(of: field)) }
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

  /// Enters an array ("a", element type) or struct ("r", field types);
  /// false, for a struct, at the end of the enclosing array.
  public func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
    switch type {
    case "a":
      let end = try next { (r) throws(BusError) -> Int in
        let length = Int(try r.uint32())
        try r.align(BusReader.alignment(of: contents))
        guard length <= r.bytes.count - r.position else { throw BusError.malformed("array longer than the message") }
        return r.position + length
      }
      containers.append(.array(end: end))
      return true
    case "r":
      if case .array(let end) = containers.last, position >= end { return false }
      // A struct inside a struct or a variant is one of its fields.
      if case .fields(var remaining) = containers.last {
        guard !remaining.isEmpty else { throw BusError.malformed("read past the end of a struct") }
        remaining.removeFirst()
        containers[containers.count - 1] = .fields(remaining)
      }
      var reader = reader()
      try reader.align(8)
      position = reader.position
      containers.append(.fields(try BusReader.split(contents)))
      return true
    default:
      throw BusError.malformed("cannot enter '\(type)'")
    }
  }

  /// Leaves the innermost container, skipping what was not read of it.
  public func exit() throws(BusError) {
    guard let container = containers.popLast() else { throw BusError.malformed("exit without a container") }
    var reader = reader()
    switch container {
    case .array(let end): reader.position = end
    case .fields(let remaining): for type in remaining { try reader.skip(type) }
    }
    position = reader.position
    // A struct that was an array's element counts as one read of it.
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

/// Bounds-checked reads at D-Bus alignment.
struct BusReader {
  let bytes: [UInt8]
  var position: Int
  var littleEndian = true

  mutating func align(_ alignment: Int) throws(BusError) {
    let aligned = (position + alignment - 1) / alignment * alignment
    guard aligned <= bytes.count else { throw BusError.malformed("truncated") }
    position = aligned
  }

  mutating func take(_ count: Int) throws(BusError) -> ArraySlice<UInt8> {
    guard count >= 0, count <= bytes.count - position else { throw BusError.malformed("truncated") }
    defer { position += count }
    return bytes[position..<position + count]
  }

  mutating func byte() throws(BusError) -> UInt8 { try take(1).first! }

  mutating func uint32() throws(BusError) -> UInt32 {
    try align(4)
    let value = try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    return littleEndian ? value : value.byteSwapped
  }

  mutating func uint64() throws(BusError) -> UInt64 {
    try align(8)
    let value = try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    return littleEndian ? value : value.byteSwapped
  }

  mutating func string() throws(BusError) -> String {
    let length = Int(try uint32())
    let text = try take(length)
    guard try byte() == 0 else { throw BusError.malformed("string without its terminator") }
    return String(decoding: text, as: UTF8.self)
  }

  mutating func signature() throws(BusError) -> String {
    let length = Int(try byte())
    let text = try take(length)
    guard try byte() == 0 else { throw BusError.malformed("signature without its terminator") }
    return String(decoding: text, as: UTF8.self)
  }

  /// Skips one value of the complete type `type`. Variants nest at most 64
  /// deep, as the specification says (and so the stack stays small).
  mutating func skip(_ type: String, depth: Int = 0) throws(BusError) {
    guard depth < 64 else { throw BusError.malformed("nested too deeply") }
    guard let code = type.first else { throw BusError.malformed("empty type") }
    switch code {
    case "y": _ = try take(1)
    case "n", "q":
      try align(2)
      _ = try take(2)
    case "b", "i", "u", "h": _ = try uint32()
    case "x", "t", "d": _ = try uint64()
    case "s", "o": _ = try string()
    case "g": _ = try signature()
    case "v": try skip(try signature(), depth: depth + 1)
    case "a":
      let element = String(type.dropFirst())
      let length = Int(try uint32())
      try align(Self.alignment(of: element))
      _ = try take(length)
    case "(", "{":
      try align(8)
      for field in try Self.split(String(type.dropFirst().dropLast())) { try skip(field, depth: depth + 1) }
    default: throw BusError.malformed("unknown type '\(code)'")
    }
  }

  static func alignment(of type: String) -> Int {
    switch type.first {
    case "y", "g", "v": return 1
    case "n", "q": return 2
    case "x", "t", "d", "(", "{": return 8
    default: return 4
    }
  }

  /// "susso" → ["s", "u", "s", "s", "o"]; "a(su)v" → ["a(su)", "v"].
  static func split(_ signature: String) throws(BusError) -> [String] {
    var types: [String] = []
    var rest = Substring(signature)
    while !rest.isEmpty {
      let length = try completeTypeLength(rest)
      types.append(String(rest.prefix(length)))
      rest = rest.dropFirst(length)
    }
    return types
  }

  static func completeTypeLength(_ signature: Substring) throws(BusError) -> Int {
    guard let first = signature.first else { throw BusError.malformed("empty type") }
    switch first {
    case "a": return 1 + (try completeTypeLength(signature.dropFirst()))
    case "(", "{":
      let close: Character = first == "(" ? ")" : "}"
      var depth = 0
      for (offset, character) in signature.enumerated() {
        if character == "(" || character == "{" { depth += 1 }
        if character == ")" || character == "}" { depth -= 1 }
        if depth == 0 {
          guard character == close else { break }
          return offset + 1
        }
      }
      throw BusError.malformed("unbalanced signature")
    default: return 1
    }
  }
}

extension BusError {
  static func malformed(_ what: String) -> BusError {
    BusError(call: "read message", code: -EBADMSG, name: nil, message: what)
  }
}
