/// D-Bus type signatures ("susso", "a{sv}", "(so)"): split into complete
/// types and checked against the specification's grammar and limits, as
/// sd-bus's signature_is_valid does. Standard library only.
enum BusSignature {
  /// Basic types: what a dict entry's key may be.
  static let basicTypes: Set<UInt8> = Set("ybnqiuxtdsogh".utf8)
  static let maximumDepth = 32

  /// "susso" → ["s", "u", "s", "s", "o"]; "a(su)v" → ["a(su)", "v"]. Throws
  /// on anything the grammar does not allow.
  static func split(_ signature: String) throws(BusError) -> [String] {
    let bytes = Array(signature.utf8)
    guard bytes.count <= BusWireFormat.maximumSignatureLength else { throw .malformed("signature longer than 255") }
    var types: [String] = []
    var start = 0
    while start < bytes.count {
      let end = try completeType(bytes, from: start, arrays: 0, structs: 0)
      types.append(String(decoding: bytes[start..<end], as: UTF8.self))
      start = end
    }
    return types
  }

  /// Whether `signature` is one complete type.
  static func isSingleCompleteType(_ signature: String) -> Bool { (try? split(signature))?.count == 1 }

  /// The end of the complete type starting at `start`.
  private static func completeType(_ bytes: [UInt8], from start: Int, arrays: Int, structs: Int) throws(BusError) -> Int {
    guard start < bytes.count else { throw .malformed("signature ends inside a type") }
    let code = bytes[start]
    if basicTypes.contains(code) || code == UInt8(ascii: "v") { return start + 1 }
    switch code {
    case UInt8(ascii: "a"):
      guard arrays < maximumDepth else { throw .malformed("arrays nested too deeply") }
      if start + 1 < bytes.count && bytes[start + 1] == UInt8(ascii: "{") {
        return try dictEntry(bytes, from: start + 1, arrays: arrays + 1, structs: structs)
      }
      return try completeType(bytes, from: start + 1, arrays: arrays + 1, structs: structs)
    case UInt8(ascii: "("):
      guard structs < maximumDepth else { throw .malformed("structs nested too deeply") }
      var position = start + 1
      guard position < bytes.count, bytes[position] != UInt8(ascii: ")") else { throw .malformed("empty struct") }
      while position < bytes.count && bytes[position] != UInt8(ascii: ")") {
        position = try completeType(bytes, from: position, arrays: arrays, structs: structs + 1)
      }
      guard position < bytes.count else { throw .malformed("unbalanced signature") }
      return position + 1
    default:
      throw .malformed("type '\(String(decoding: [code], as: UTF8.self))' is not allowed here")
    }
  }

  /// "{kv}": a basic key and one complete value, only as an array's element.
  private static func dictEntry(_ bytes: [UInt8], from start: Int, arrays: Int, structs: Int) throws(BusError) -> Int {
    guard structs < maximumDepth else { throw .malformed("structs nested too deeply") }
    guard start + 1 < bytes.count, basicTypes.contains(bytes[start + 1]) else { throw .malformed("a dict entry's key must be basic") }
    let end = try completeType(bytes, from: start + 2, arrays: arrays, structs: structs + 1)
    guard end < bytes.count, bytes[end] == UInt8(ascii: "}") else { throw .malformed("a dict entry has one key and one value") }
    return end + 1
  }

  /// The alignment of a value of complete type `type`.
  static func alignment(of type: Substring) -> Int {
    switch type.first {
    case "y", "g", "v": return 1
    case "n", "q": return 2
    case "x", "t", "d", "(", "{": return 8
    default: return 4
    }
  }
}
