import Glibc
import PasslockPOSIX
import PasslockWaylandIdle
import Testing

/// The compositor's idle notification as passlockd asks for it: the exact
/// requests on the wire, what each event means, and a compositor that lacks
/// the protocol, errs or breaks the format ending the watch (never a lock
/// and never a hang). The compositor is the test, at the other end of a
/// socket pair; the real one is sway in Tests/System/run.
@Suite struct IdleNotificationWatchTests {
  /// A socket pair: the watch on one end, the test's compositor on the other.
  final class Bed {
    let watch: IdleNotificationWatch
    let compositor: FileDescriptor
    var received = WaylandWire.Framer()

    init(timeoutMilliseconds: UInt32 = 300_000) throws {
      var fds: [Int32] = [0, 0]
      #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
      compositor = FileDescriptor(rawValue: fds[1])
      watch = try IdleNotificationWatch(socket: FileDescriptor(rawValue: fds[0]), timeoutMilliseconds: timeoutMilliseconds)
    }

    var compositorClosed = false

    deinit {
      watch.close()
      if !compositorClosed { compositor.close() }
    }

    /// Every request the watch sent so far.
    func requests() throws -> [WaylandWire.Message] {
      var buffer = [UInt8](repeating: 0, count: 4096)
      let count = buffer.withUnsafeMutableBytes { read(compositor.rawValue, $0.baseAddress, $0.count) }
      if count > 0 { received.append(buffer[0..<count]) }
      var messages: [WaylandWire.Message] = []
      while let message = try received.next() { messages.append(message) }
      return messages
    }

    func send(_ messages: [WaylandWire.Message]) throws { try compositor.writeAll(messages.flatMap(\.bytes)) }
    func sendRaw(_ bytes: [UInt8]) throws { try compositor.writeAll(bytes) }

    /// The globals a compositor announces, then the sync's done.
    func announce(_ interfaces: [String]) throws {
      try send(
        interfaces.enumerated().map { index, interface in
          event(2, 0, [.uint(UInt32(index + 10)), .string(interface), .uint(1)])
        } + [event(3, 0, [.uint(7)])])
    }
  }

  static func event(_ object: UInt32, _ opcode: UInt16, _ arguments: [WaylandWire.Argument]) -> WaylandWire.Message {
    WaylandWire.Message(object: object, opcode: opcode, arguments: WaylandWire.Argument.encode(arguments))
  }
  func event(_ object: UInt32, _ opcode: UInt16, _ arguments: [WaylandWire.Argument] = []) -> WaylandWire.Message {
    Self.event(object, opcode, arguments)
  }

  @Test func asksForTheRegistryAndASyncFirst() throws {
    let bed = try Bed()
    #expect(
      try bed.requests() == [
        event(1, 1, [.uint(2)]),  // wl_display.get_registry(2)
        event(1, 0, [.uint(3)]),  // wl_display.sync(3)
      ])
  }

  @Test func bindsTheFirstSeatAndTheNotifierAndAsksForTheTimeout() throws {
    let bed = try Bed(timeoutMilliseconds: 20_000)
    _ = try bed.requests()
    try bed.send([
      event(2, 0, [.uint(10), .string("wl_compositor"), .uint(6)]),
      event(2, 0, [.uint(11), .string("wl_seat"), .uint(9)]),
      event(2, 0, [.uint(12), .string("wl_seat"), .uint(9)]),
      event(2, 0, [.uint(13), .string("ext_idle_notifier_v1"), .uint(2)]),
    ])
    #expect(bed.watch.readable().isEmpty)
    #expect(try bed.requests().isEmpty)  // nothing before every global is known
    try bed.send([event(3, 0, [.uint(1)])])
    #expect(bed.watch.readable() == [.watching])
    #expect(
      try bed.requests() == [
        event(2, 0, [.uint(11), .string("wl_seat"), .uint(1), .uint(4)]),
        event(2, 0, [.uint(13), .string("ext_idle_notifier_v1"), .uint(1), .uint(5)]),
        event(5, 1, [.uint(6), .uint(20_000), .uint(4)]),  // get_idle_notification(6, timeout, seat)
      ])
  }

  @Test func idledAndResumedAreTheNotificationsEvents() throws {
    let bed = try Bed()
    try bed.announce(["wl_seat", "ext_idle_notifier_v1"])
    #expect(bed.watch.readable() == [.watching])
    // The seat's capabilities (it was bound) mean nothing here.
    try bed.send([event(4, 0, [.uint(3)]), event(6, 0), event(6, 1), event(6, 0)])
    #expect(bed.watch.readable() == [.idle, .resumed, .idle])
  }

  @Test(arguments: [["wl_seat"], ["ext_idle_notifier_v1"], []])
  func aCompositorWithoutTheProtocolOrASeatIsUnsupported(globals: [String]) throws {
    let bed = try Bed()
    try bed.announce(globals)
    #expect(bed.watch.readable() == [.unsupported])
  }

  @Test func aMessageSplitAcrossReadsWaitsForItsRest() throws {
    let bed = try Bed()
    try bed.announce(["wl_seat", "ext_idle_notifier_v1"])
    _ = bed.watch.readable()
    let idled = event(6, 0).bytes
    try bed.sendRaw(Array(idled[0..<5]))
    #expect(bed.watch.readable().isEmpty)
    try bed.sendRaw(Array(idled[5...]))
    #expect(bed.watch.readable() == [.idle])
  }

  @Test func theCompositorClosingEndsTheWatch() throws {
    let bed = try Bed()
    bed.compositor.close()
    bed.compositorClosed = true
    #expect(bed.watch.readable() == [.ended("the compositor closed the connection")])
  }

  @Test func aProtocolErrorEndsTheWatch() throws {
    let bed = try Bed()
    try bed.send([event(1, 0, [.uint(5), .uint(1), .string("invalid object 5")])])
    #expect(bed.watch.readable() == [.ended("the compositor reported error 1: invalid object 5")])
  }

  @Test(
    arguments: [
      // A size below the header; above libwayland's limit; not whole words.
      [6, 0, 0, 0, 0, 0, 4, 0], [6, 0, 0, 0, 0, 0, 0x10, 0x10], [6, 0, 0, 0, 0, 0, 10, 0],
    ] as [[UInt8]])
  func aMalformedMessageEndsTheWatch(header: [UInt8]) throws {
    let bed = try Bed()
    try bed.sendRaw(header + [UInt8](repeating: 0, count: 8))
    guard case .ended(let why) = bed.watch.readable().last else {
      Issue.record("the watch went on after a malformed message")
      return
    }
    #expect(why.hasPrefix("malformed message from the compositor"))
  }

  @Test func aStringPastItsMessageIsMalformed() throws {
    let bed = try Bed()
    // wl_registry.global whose string claims 64 bytes in a 16-byte message.
    try bed.send([WaylandWire.Message(object: 2, opcode: 0, arguments: WaylandWire.Argument.encode([.uint(10), .uint(64)]))])
    #expect(bed.watch.readable() == [.ended("malformed message from the compositor: a string past its message")])
  }

  @Test func stringsAreLengthPrefixedNulTerminatedAndPadded() {
    #expect(WaylandWire.Argument.encode([.string("wl_seat")]) == [8, 0, 0, 0] + Array("wl_seat".utf8) + [0])
    #expect(WaylandWire.Argument.encode([.string("abcd")]) == [5, 0, 0, 0] + Array("abcd".utf8) + [0, 0, 0, 0])
  }
}
