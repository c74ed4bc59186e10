/// Bounds-checked, specification-checked reads at D-Bus alignment.
struct BusValueReader {
  let bytes: [UInt8]
  var position: Int
  var littleEndian = true
  /// How many descriptors came with the message (a `h` must index one).
  var descriptors = 0

  /// Skips to `alignment`; the padding must be zero.
  mutating func align(_ alignment: Int) throws(BusError) {
    let aligned = (position + alignment - 1) / alignment * alignment
    guard aligned <= bytes.count else { throw .malformed("truncated") }
    guard bytes[position..<aligned].allSatisfy({ $0 == 0 }) else { throw .malformed("padding that is not zero") }
    position = aligned
  }

  mutating func take(_ count: Int) throws(BusError) -> ArraySlice<UInt8> {
    guard count >= 0, count <= bytes.count - position else { throw .malformed("truncated") }
    defer { position += count }
    return bytes[position..<position + count]
  }

  mutating func byte() throws(BusError) -> UInt8 { try take(1).first! }

  mutating func uint16() throws(BusError) -> UInt16 {
    try align(2)
    let value = try take(2).reversed().reduce(0) { $0 << 8 | UInt16($1) }
    return littleEndian ? value : value.byteSwapped
  }

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

  mutating func boolean() throws(BusError) -> Bool {
    let value = try uint32()
    guard value <= 1 else { throw .malformed("a boolean of \(value)") }
    return value == 1
  }

  mutating func unixFD() throws(BusError) -> Int {
    let index = Int(try uint32())
    guard index < descriptors else { throw .malformed("descriptor index \(index) of \(descriptors)") }
    return index
  }

  /// A string: UTF-8, no NUL inside, a NUL after.
  mutating func string() throws(BusError) -> String {
    let length = Int(try uint32())
    let text = try take(length)
    guard try byte() == 0 else { throw .malformed("string without its terminator") }
    guard !text.contains(0) else { throw .malformed("NUL inside a string") }
    guard let string = String(validating: text, as: UTF8.self) else { throw .malformed("a string that is not UTF-8") }
    return string
  }

  /// An object path: "/" or /-separated names of [A-Za-z0-9_].
  mutating func objectPath() throws(BusError) -> String {
    let path = try string()
    guard Self.isObjectPath(path) else { throw .malformed("object path '\(path)'") }
    return path
  }

  static func isObjectPath(_ path: String) -> Bool {
    let bytes = Array(path.utf8)
    guard bytes.first == UInt8(ascii: "/") else { return false }
    if bytes.count == 1 { return true }
    guard bytes.last != UInt8(ascii: "/") else { return false }
    var previousSlash = false
    for byte in bytes {
      let slash = byte == UInt8(ascii: "/")
      if slash && previousSlash { return false }
      let allowed =
        slash || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x5f
      guard allowed else { return false }
      previousSlash = slash
    }
    return true
  }

  /// A signature: its own grammar checked.
  mutating func signature() throws(BusError) -> String {
    let length = Int(try byte())
    let text = try take(length)
    guard try byte() == 0 else { throw .malformed("signature without its terminator") }
    let signature = String(decoding: text, as: UTF8.self)
    _ = try BusSignature.split(signature)
    return signature
  }

  /// Skips (and checks) one value of complete type `type`. Containers nest
  /// at most 64 deep, as the specification says (and so the stack stays small).
  mutating func skip(_ type: Substring, depth: Int) throws(BusError) {
    guard depth < 64 else { throw .malformed("nested too deeply") }
    guard let code = type.first else { throw .malformed("empty type") }
    switch code {
    case "y": _ = try take(1)
    case "n", "q": _ = try uint16()
    case "b": _ = try boolean()
    case "i", "u": _ = try uint32()
    case "h": _ = try unixFD()
    case "x", "t", "d": _ = try uint64()
    case "s": _ = try string()
    case "o": _ = try objectPath()
    case "g": _ = try signature()
    case "v":
      let inner = try signature()
      guard BusSignature.isSingleCompleteType(inner) else { throw .malformed("a variant of '\(inner)'") }
      try skip(Substring(inner), depth: depth + 1)
    case "a":
      let element = type.dropFirst()
      let length = Int(try uint32())
      guard length <= BusWireFormat.maximumArrayLength else { throw .malformed("an array over 64 MiB") }
      try align(BusSignature.alignment(of: element))
      let end = position + length
      guard end <= bytes.count else { throw .malformed("an array longer than the message") }
      if element == "y" { position = end }  // bytes: nothing to check in each
      while position < end { try skip(element, depth: depth + 1) }
      guard position == end else { throw .malformed("an array's last element runs past its end") }
    case "(", "{":
      try align(8)
      for field in try BusSignature.split(String(type.dropFirst().dropLast())) { try skip(Substring(field), depth: depth + 1) }
    default: throw .malformed("unknown type '\(code)'")
    }
  }
}
