import Glibc
import PasslockPOSIX
import Testing

@testable import PasslockBus

/// D-Bus messages as passlockd reads and writes them: what it sends parses
/// back, every read is checked against the signature, and no malformed
/// message (a bus peer can send us any bytes) traps or reads as values.
@Suite struct BusMessageTests {
  static func call(_ arguments: [BusValue]) -> [UInt8] {
    BusMessageWriter.methodCall(
      serial: 7, destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
      interface: "org.freedesktop.login1.Manager", member: "Inhibit", arguments: arguments)
  }

  static func parse(_ bytes: [UInt8]) throws(BusError) -> BusMessage {
    guard let length = try BusWireFormat.messageLength(bytes, from: 0), length == bytes.count else {
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
    var body = BusMessageWriter()
    var elements = BusMessageWriter()
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
    var message = BusMessageWriter()
    message.bytes = [UInt8(ascii: "l"), BusWireFormat.Kind.signal.rawValue, 0, 1]
    message.uint32(UInt32(body.count))
    message.uint32(9)
    var fields = BusMessageWriter()
    for (code, type, value) in [
      (BusWireFormat.Field.path, "o", "/org/freedesktop/login1"), (.interface, "s", "org.freedesktop.login1.Manager"),
      (.member, "s", "ListSessions"), (.sender, "s", sender), (.signature, "g", signature),
    ] {
      fields.pad(to: 8)
      fields.byte(code.rawValue)
      fields.signature(type)
      if type == "g" { fields.signature(value) } else { fields.string(value) }
    }
    if descriptors > 0 {
      fields.pad(to: 8)
      fields.byte(BusWireFormat.Field.unixFDs.rawValue)
      fields.signature("u")
      fields.uint32(descriptors)
    }
    message.uint32(UInt32(fields.bytes.count))
    message.bytes += fields.bytes
    message.pad(to: 8)
    return message.bytes + body
  }

  @Test func signaturesSplitIntoCompleteTypes() throws {
    #expect(try BusSignature.split("susso") == ["s", "u", "s", "s", "o"])
    #expect(try BusSignature.split("a(su)va{sv}as") == ["a(su)", "v", "a{sv}", "as"])
    for bad in ["(su", "a", "()", "a{vs}", "{ss}", "a{s}", "a{sss}", "z", "(s))", String(repeating: "a", count: 33) + "s"] {
      #expect(throws: BusError.self, "'\(bad)' is not a signature") { try BusSignature.split(bad) }
    }
  }

  @Test func truncatedOrLyingMessagesThrow() throws {
    let good = Self.call([.string("sleep")])
    // Cut anywhere: never a whole message, or one that fails to parse.
    for cut in 0..<good.count {
      let bytes = Array(good[..<cut])
      if let length = try? BusWireFormat.messageLength(bytes, from: 0), length <= bytes.count { Issue.record("cut at \(cut) looks whole") }
    }
    // A string longer than the message: refused when parsed, before any read.
    var lying = good
    let bodyStart = good.count - 10  // u32 length + "sleep" + NUL, padded from an 8-aligned start
    lying[bodyStart] = 0xff
    #expect(throws: BusError.self) { try Self.parse(lying) }
    // Neither byte order, or another version: the protocol is broken.
    var other = good
    other[0] = UInt8(ascii: "X")
    #expect(throws: BusError.self) { try BusWireFormat.messageLength(other, from: 0) }
    other = good
    other[3] = 2
    #expect(throws: BusError.self) { try BusWireFormat.messageLength(other, from: 0) }
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
      guard let length = try? BusWireFormat.messageLength(bytes, from: 0), length <= bytes.count else { continue }
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
    var reader = BusValueReader(bytes: bytes, position: 0)
    #expect(throws: BusError.self) { try reader.skip("v", depth: 0) }
  }

  /// A big-endian message (the specification lets a peer choose): read alike.
  @Test func bigEndianMessagesAreReadToo() throws {
    var little = Self.call([.string("sleep"), .uint32(0x0102_0304)])
    // Swap every 4-byte word the little-endian writer wrote: the fixed header's
    // lengths and serial, the fields' string lengths, the body's.
    func swap(_ at: Int) { little[at..<at + 4].reverse() }
    little[0] = UInt8(ascii: "B")
    for at in [4, 8, 12] { swap(at) }
    var reader = BusValueReader(bytes: little, position: 16)
    // Walk the fields as the little-endian original to find the words to swap.
    let fieldsEnd = 16 + Int(BusWireFormat.uint32(little, 12, littleEndian: false))
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
    #expect(try BusWireFormat.messageLength(little, from: 0) == little.count)
    let message = try BusMessage(parsing: little[...])
    #expect(message.member == "Inhibit")
    #expect(try message.string() == "sleep")
    #expect(try message.uint32() == 0x0102_0304)
  }
}

/// Every read is checked like sd-bus's sd_bus_message_read_basic: the type
/// asked for against the signature, and the whole body against the
/// specification when the message is parsed.
@Suite struct BusMessageCheckTests {
  /// A signal with `body` of `signature`, parsed.
  static func signal(_ signature: String, _ body: [UInt8]) throws(BusError) -> BusMessage {
    try BusMessageTests.parse(BusMessageTests.signal(signature: signature, body: body))
  }

  static func string(_ text: [UInt8]) -> [UInt8] {
    var writer = BusMessageWriter()
    writer.uint32(UInt32(text.count))
    return writer.bytes + text + [0]
  }

  @Test func aReadOfAnotherTypeThrowsInsteadOfReinterpreting() throws {
    let message = try Self.signal("s", Self.string(Array("sleep".utf8)))
    #expect(throws: BusError.self, "a bool where the signature has a string") { try message.bool() }
    #expect(throws: BusError.self) { try message.uint32() }
    #expect(throws: BusError.self) { try message.objectPath() }
    #expect(try message.string() == "sleep")
    #expect(throws: BusError.self, "past the last value") { try message.string() }
    message.rewind()
    #expect(throws: BusError.self, "an array where there is a string") { try message.enter("a", "s") }
  }

  /// (signature, body) that the specification does not allow.
  @Test(
    arguments: [
      ("s", string(Array("nul\u{0}inside".utf8))),  // NUL inside a string
      ("s", string([0x66, 0xff, 0x6f])),  // not UTF-8
      ("s", Array(string(Array("x".utf8)).dropLast()) + [1]),  // no terminating NUL
      ("o", string(Array("not/a/path".utf8))),
      ("o", string(Array("/trailing/".utf8))),
      ("o", string(Array("//double".utf8))),
      ("b", [2, 0, 0, 0]),  // a boolean of 2
      ("yu", [7, 1, 0, 0, 5, 0, 0, 0]),  // padding that is not zero
      ("u", [1, 0, 0, 0, 9]),  // a byte after the last value
      ("au", [0, 0, 0, 5, 1, 0, 0, 0]),  // an array of 80 MiB
      ("au", [6, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]),  // an element running past the array's end
      ("v", [1, 0x7a, 0]),  // a variant of an unknown type
      ("v", [2, 0x73, 0x73, 0]),  // a variant of two types
      ("h", [0, 0, 0, 0]),  // a descriptor that did not come
    ] as [(String, [UInt8])])
  func malformedBodiesAreRefusedWhenParsed(_ signature: String, _ body: [UInt8]) {
    #expect(throws: BusError.self) { try Self.signal(signature, body) }
  }

  /// Header fields of the wrong type, missing ones, a serial of 0.
  @Test func malformedHeadersAreRefused() {
    var message = BusMessageWriter()
    message.bytes = [UInt8(ascii: "l"), BusWireFormat.Kind.signal.rawValue, 0, 1]
    message.uint32(0)
    message.uint32(3)
    var fields = BusMessageWriter()
    for (code, type, value) in [(BusWireFormat.Field.path, "s", "/a"), (.interface, "s", "a.b"), (.member, "s", "C")] {
      fields.pad(to: 8)
      fields.byte(code.rawValue)
      fields.signature(type)
      fields.string(value)
    }
    message.uint32(UInt32(fields.bytes.count))
    message.bytes += fields.bytes
    message.pad(to: 8)
    #expect(throws: BusError.self, "PATH must be an object path ('o')") { try BusMessageTests.parse(message.bytes) }
    let noMember = BusMessageTests.signal(signature: "", body: []).prefix(16)
    #expect(throws: BusError.self, "a header cut short") { try BusMessage(parsing: noMember) }
    var zeroSerial = BusMessageTests.signal(signature: "", body: [])
    zeroSerial[8] = 0
    zeroSerial[9] = 0
    #expect(throws: BusError.self, "serial 0") { try BusMessageTests.parse(zeroSerial) }
  }

  /// passlockd answers a method call made to it with an error: it parses
  /// back as one, naming the call it answers.
  @Test func anErrorReplyParsesBack() throws {
    let bytes = BusMessageWriter.errorReply(
      serial: 12, replySerial: 7, destination: ":1.42", name: "org.freedesktop.DBus.Error.UnknownMethod", text: "no")
    let reply = try BusMessageTests.parse(bytes)
    #expect(reply.kind == .error)
    #expect(reply.replySerial == 7)
    #expect(reply.errorName == "org.freedesktop.DBus.Error.UnknownMethod")
    #expect(reply.destination == ":1.42")
    #expect(try reply.string() == "no")
  }

  /// A method passlockd offers (org.freedesktop.ScreenSaver.Inhibit)
  /// returns its values: it parses back as the return of that call.
  @Test func aMethodReturnParsesBack() throws {
    let bytes = BusMessageWriter.methodReturn(serial: 13, replySerial: 8, destination: ":1.43", arguments: [.uint32(5)])
    let reply = try BusMessageTests.parse(bytes)
    #expect(reply.kind == .methodReturn)
    #expect(reply.replySerial == 8)
    #expect(reply.destination == ":1.43")
    #expect(reply.signature == "u")
    #expect(try reply.uint32() == 5)
  }
}

/// The messages dbus-daemon and logind really send (recorded by
/// scripts/capture-bus-corpus, the fuzzer's seeds) parse and read back whole.
@Suite struct RecordedBusMessageTests {
  static let directory: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/Fuzz/BusCorpus/dbus-daemon"
  }()

  static let recorded: [String] = {
    (Directory.names(Self.directory) ?? []).filter { !$0.hasPrefix(".") }.sorted()
  }()

  @Test func thereAreRecordedMessages() { #expect(Self.recorded.count >= 20) }

  @Test(arguments: recorded)
  func aRecordedMessageParses(_ name: String) throws {
    let fd = open(Self.directory + "/" + name, O_RDONLY)
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 1 << 20)
    let n = read(fd, &bytes, bytes.count)
    let message = try BusMessage(parsing: bytes[..<n])
    #expect(try BusWireFormat.messageLength(Array(bytes[..<n]), from: 0) == n)
    #expect(message.path != nil || message.replySerial != nil)
  }
}
