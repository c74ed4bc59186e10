// libFuzzer target over the D-Bus message reader: PasslockBus's
// BusMessageReader (with BusValueReader), BusSignature, BusWireFormat and BusError, compiled on
// their own (standard library only) by scripts/fuzz (-sanitize=fuzzer).
//
// Any bytes a bus peer sends are framed into messages, each parsed. The
// properties: nothing traps or hangs; and a message that parses reads back
// whole, value by value, with the typed readers following its signature
// (the parse checked the body, so no read of it may then fail).

@_cdecl("LLVMFuzzerTestOneInput")
public func busMessageFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  var offset = 0
  while let length = try? BusWireFormat.messageLength(bytes, from: offset), bytes.count - offset >= length {
    if let message = try? BusMessage(parsing: bytes[offset..<offset + length]) {
      do {
        for type in try BusSignature.split(message.signature) { try read(Substring(type), from: message) }
        _ = message.path
        _ = message.member
        _ = message.replySerial
      } catch {
        fatalError("a message that parsed does not read back: \(error)")
      }
      // Reads of the wrong type throw; they never trap.
      message.rewind()
      _ = try? message.bool()
      _ = try? message.enter("a", "(susso)")
      _ = try? message.properties()
    }
    offset += length
  }
  return 0
}

/// Reads one value of complete type `type` with the reader's typed calls.
func read(_ type: Substring, from message: BusMessage) throws(BusError) {
  switch type.first {
  case "s": _ = try message.string()
  case "o": _ = try message.objectPath()
  case "b": _ = try message.bool()
  case "u": _ = try message.uint32()
  case "t": _ = try message.uint64()
  case "h": _ = try message.unixFD()
  case "v": _ = try message.variant()
  case "a":
    let element = type.dropFirst()
    if element.first == "(" || element.first == "{" {
      _ = try message.enter("a", String(element))
      let fields = String(element.dropFirst().dropLast())
      while try message.enter("r", fields) {
        for field in try BusSignature.split(fields) { try read(Substring(field), from: message) }
        try message.exit()
      }
      try message.exit()
    } else {
      _ = try message.enter("a", String(element))
      try message.exit()
    }
  case "(":
    let fields = String(type.dropFirst().dropLast())
    _ = try message.enter("r", fields)
    for field in try BusSignature.split(fields) { try read(Substring(field), from: message) }
    try message.exit()
  default:
    try message.skipValue()
  }
}
