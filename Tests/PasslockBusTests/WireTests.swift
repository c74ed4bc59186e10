import Glibc
import Testing

@testable import PasslockBus

/// D-Bus's wire format as passlockd speaks it: what it sends parses back,
/// and no malformed message (a bus peer can send us any bytes) traps.
@Suite struct WireTests {
  static func call(_ arguments: [BusValue]) -> [UInt8] {
    Wire.methodCall(
      serial: 7, destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
      interface: "org.freedesktop.login1.Manager", member: "Inhibit", arguments: arguments)
  }

  static func parse(_ bytes: [UInt8]) throws(BusError) -> BusMessage {
    guard let length = try Wire.messageLength(bytes, from: 0), length == bytes.count else {
      throw BusError.malformed("length")
    }
    return try BusMessage(parsing: bytes[...])
  }

  @Test func aMethodCallParsesBack() throws {
    let message = try Self.parse(Self.call([.string("sleep"), .objectPath("/a/b"), .bool(true), .uint32(42)]))
    #expect(message.kind == .methodCall)
    #expect(message.serial == 7)
    #expect(message.path == "/org/freedesktop/login1")
    #expect(message.member == "Inhibit")
    #expect(message.interface == "org.freedesktop.login1.Manager")
    #expect(message.signature == "sobu")
    #expect(try message.string() == "sleep")
    #expect(try message.objectPath() == "/a/b")
    #expect(try message.bool())
    #expect(try message.uint32() == 42)
    #expect(throws: BusError.self) { try message.uint32() }
  }

  /// ListSessions' a(susso), as logind sends it: arrays and structs, with
  /// exit() skipping what was not read.
  @Test func arraysOfStructsAreWalkedAndSkipped() throws {
    var body = Wire.Writer()
    var elements = Wire.Writer()
    // Elements are laid out from an 8-aligned offset (after the length word and padding).
    for (id, uid) in [("c1", UInt32(1000)), ("c22", UInt32(0))] {
      elements.pad(to: 8)
      elements.string(id)
      elements.uint32(uid)
      elements.string("alice")
      elements.string("seat0")
      elements.string("/org/freedesktop/login1/session/" + id)
    }
    body.uint32(UInt32(elements.bytes.count))
    body.pad(to: 8)
    body.bytes += elements.bytes
    let message = try Self.parse(Self.signal(signature: "a(susso)", body: body.bytes))
    #expect(try message.enter("a", "(susso)"))
    var seen: [(String, UInt32)] = []
    while try message.enter("r", "susso") {
      let id = try message.string()
      let uid = try message.uint32()
      try message.exit()  // the three strings left are skipped
      seen.append((id, uid))
    }
    try message.exit()
    #expect(seen.map(\.0) == ["c1", "c22"])
    #expect(seen.map(\.1) == [1000, 0])
  }

  /// A signal's bytes with `body` of `signature` (as the bus would send it),
  /// saying `descriptors` came with it.
  static func signal(signature: String, body: [UInt8], descriptors: UInt32 = 0, sender: String = ":1.5") -> [UInt8] {
    var message = Wire.Writer()
    message.bytes = [UInt8(ascii: "l"), Wire.Kind.signal.rawValue, 0, 1]
    message.uint32(UInt32(body.count))
    message.uint32(9)
    var fields = Wire.Writer()
    for (code, type, value) in [
      (Wire.Field.path, "o", "/org/freedesktop/login1"), (.interface, "s", "org.freedesktop.login1.Manager"),
      (.member, "s", "ListSessions"), (.sender, "s", sender), (.signature, "g", signature),
    ] {
      fields.pad(to: 8)
      fields.byte(code.rawValue)
      fields.signature(type)
      if type == "g" { fields.signature(value) } else { fields.string(value) }
    }
    if descriptors > 0 {
      fields.pad(to: 8)
      fields.byte(Wire.Field.unixFDs.rawValue)
      fields.signature("u")
      fields.uint32(descriptors)
    }
    message.uint32(UInt32(fields.bytes.count))
    message.bytes += fields.bytes
    message.pad(to: 8)
    return message.bytes + body
  }

  @Test func signaturesSplitIntoCompleteTypes() throws {
    #expect(try BusReader.split("susso") == ["s", "u", "s", "s", "o"])
    #expect(try BusReader.split("a(su)va{sv}as") == ["a(su)", "v", "a{sv}", "as"])
    #expect(throws: BusError.self) { try BusReader.split("(su") }
  }

  @Test func truncatedOrLyingMessagesThrow() throws {
    let good = Self.call([.string("sleep")])
    // Cut anywhere: never a whole message, or one that fails to parse.
    for cut in 0..<good.count {
      let bytes = Array(good[..<cut])
      if let length = try? Wire.messageLength(bytes, from: 0), length <= bytes.count { Issue.record("cut at \(cut) looks whole") }
    }
    // A string longer than the message.
    var lying = good
    let bodyStart = good.count - 10  // u32 length + "sleep" + NUL, padded from an 8-aligned start
    lying[bodyStart] = 0xff
    let message = try Self.parse(lying)
    #expect(throws: BusError.self) { try message.string() }
    // Neither byte order, or another version: the protocol is broken.
    var other = good
    other[0] = UInt8(ascii: "X")
    #expect(throws: BusError.self) { try Wire.messageLength(other, from: 0) }
    other = good
    other[3] = 2
    #expect(throws: BusError.self) { try Wire.messageLength(other, from: 0) }
  }

  /// Random corruption of real messages: every read either succeeds or
  /// throws; none traps (the test process would die).
  @Test func corruptedMessagesNeverTrap() {
    var generator = SystemRandomNumberGenerator()
    let samples = [Self.call([.string("sleep"), .bool(false), .uint32(3)]), Self.signal(signature: "a(susso)", body: [0, 0, 0, 0])]
    for _ in 0..<3000 {
      var bytes = samples.randomElement(using: &generator)!
      for _ in 0..<Int.random(in: 1...6, using: &generator) {
        bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
      }
      guard let length = try? Wire.messageLength(bytes, from: 0), length <= bytes.count else { continue }
      guard let message = try? BusMessage(parsing: bytes[..<length]) else { continue }
      _ = try? message.enter("a", "(susso)")
      _ = try? message.enter("r", "susso")
      _ = try? message.string()
      _ = try? message.uint32()
      _ = try? message.exit()
      _ = try? message.bool()
      _ = try? message.uint64()
      _ = try? message.enterVariant()
      _ = try? message.objectPath()
    }
  }

  /// Variants inside variants, deeper than the specification allows: an
  /// error, not a stack overflow.
  @Test func deeplyNestedVariantsAreRefused() {
    var bytes: [UInt8] = []
    for _ in 0..<10_000 { bytes += [1, UInt8(ascii: "v"), 0] }
    var reader = BusReader(bytes: bytes, position: 0)
    #expect(throws: BusError.self) { try reader.skip("v") }
  }

  /// A big-endian message (the specification lets a peer choose): read alike.
  @Test func bigEndianMessagesAreReadToo() throws {
    var little = Self.call([.string("sleep"), .uint32(0x0102_0304)])
    // Swap every 4-byte word the little-endian writer wrote: the fixed header's
    // lengths and serial, the fields' string lengths, the body's.
    func swap(_ at: Int) { little[at..<at + 4].reverse() }
    little[0] = UInt8(ascii: "B")
    for at in [4, 8, 12] { swap(at) }
    var reader = BusReader(bytes: little, position: 16)
    // Walk the fields as the little-endian original to find the words to swap.
    let fieldsEnd = 16 + Int(Wire.uint32(little, 12, littleEndian: false))
    while reader.position < fieldsEnd {
      try reader.align(8)
      _ = try reader.byte()
      let type = try reader.signature()
      if type == "g" {
        _ = try reader.signature()
      } else {
        try reader.align(4)
        let at = reader.position
        _ = try reader.string()
        swap(at)
      }
    }
    let bodyStart = (fieldsEnd + 7) / 8 * 8
    swap(bodyStart)
    swap(bodyStart + 12)
    #expect(try Wire.messageLength(little, from: 0) == little.count)
    let message = try BusMessage(parsing: little[...])
    #expect(message.member == "Inhibit")
    #expect(try message.string() == "sleep")
    #expect(try message.uint32() == 0x0102_0304)
  }
}
