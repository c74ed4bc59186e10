import CLinux
import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// One connection to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else
/// /run/dbus/system_bus_socket), or another bus at the address given,
/// spoken directly: EXTERNAL authentication (BusAuthentication), descriptor
/// passing (BusInput), synchronous method calls, signal subscriptions,
/// methods offered (`onMethodCall`); messages are read and written by
/// BusMessageReader.swift and BusMessageWriter.swift. No libsystemd:
/// passlockd links nothing but libc. Handlers run only from `process()`,
/// never inside a call: signals that arrive while a call waits are queued,
/// and `wakeFD` becomes readable so that the event loop comes back for them
/// (the socket no longer shows them).
public final class Bus {
  public let fd: Int32
  /// Readable while queued signals wait for `process()`.
  public let wakeFD: Int32
  private let wakeWrite: Int32
  private let socket: FileDescriptor
  /// Our name on the bus (Hello's answer).
  public private(set) var uniqueName = ""
  private var serial: UInt32 = 0
  /// The socket's receiving side; it owns what is not yet framed.
  private let input: BusInput
  private var queue: [ReceivedMessage] = []
  /// The call waiting for its reply: its serial and who may answer it.
  private var pendingCall: (serial: UInt32, replier: String?)?
  private var matches: [Match] = []
  private var methods: [Method] = []
  /// The unique name owning each well-known sender we listen to.
  private var owners: [String: String] = [:]
  private var closed = false

  private struct Match {
    var sender: String
    var path: String?
    var interface: String
    var member: String?
    var argument0: String?
    var handler: (BusMessage) -> Void
  }

  /// A method we offer on `path` (passlockd's org.freedesktop.ScreenSaver).
  private struct Method {
    var path: String
    var interface: String
    var member: String
    var handler: (BusMessage) -> BusMethodReply
  }

  public static let defaultSystemAddress = "unix:path=/run/dbus/system_bus_socket"

  /// The system bus at `address`, or where DBUS_SYSTEM_BUS_ADDRESS says (a
  /// root PAM host must pass the address: a setuid host's environment is
  /// its caller's), authenticated and greeted within `timeoutMicroseconds`
  /// each.
  public init(address: String? = nil, timeoutMicroseconds: UInt64 = 5_000_000) throws(BusError) {
    let address = address ?? environment("DBUS_SYSTEM_BUS_ADDRESS") ?? Self.defaultSystemAddress
    socket = try Self.connect(address)
    fd = socket.rawValue
    input = BusInput(fd: socket)
    let wake: (read: Int32, write: Int32)
    do { wake = try closeOnExecPipe() } catch {
      socket.close()
      throw BusError.system("pipe", errno: error.errno)
    }
    for end in [wake.read, wake.write] { _ = passlock_fcntl(end, F_SETFL, passlock_fcntl(end, F_GETFL, 0) | O_NONBLOCK) }
    wakeFD = wake.read
    wakeWrite = wake.write
    // From here deinit closes the descriptors, also when init throws.
    try BusAuthentication.run(on: socket, timeoutMicroseconds: timeoutMicroseconds)
    uniqueName = try call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", timeoutMicroseconds: timeoutMicroseconds
    ).string()
  }

  deinit {
    queue = []
    for descriptor in [fd, wakeFD, wakeWrite] { Glibc.close(descriptor) }
  }

  /// The first `unix:path=` or `unix:abstract=` address in `address`.
  static func connect(_ address: String) throws(BusError) -> FileDescriptor {
    for entry in address.split(separator: ";") where entry.hasPrefix("unix:") {
      var socketAddress: UnixSocketAddress?
      for pair in entry.dropFirst(5).split(separator: ",") {
        if pair.hasPrefix("path=") { socketAddress = UnixSocketAddress(path: unescape(pair.dropFirst(5))) }
        if pair.hasPrefix("abstract=") { socketAddress = UnixSocketAddress(abstract: unescape(pair.dropFirst(9))) }
      }
      guard let socketAddress else { continue }
      // Non-blocking from the start: a bus whose backlog is full answers
      // EAGAIN at once instead of holding the caller.
      do { return try UnixSocket.connect(socketAddress, nonBlocking: true) } catch {
        throw BusError.system("connect \(address)", errno: error.errno)
      }
    }
    throw BusError(call: "connect", code: -EINVAL, message: "no unix: address in '\(address)'")
  }

  /// D-Bus addresses escape bytes as %XX.
  static func unescape(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    var rest = Array(text.utf8)[...]
    while let byte = rest.popFirst() {
      if byte == UInt8(ascii: "%"), rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) {
        bytes.append(value)
        rest = rest.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Sends all of `bytes` within 5 s. A message only partly sent leaves the
  /// stream unframeable for the bus: then the connection counts as lost.
  private func sendAll(_ bytes: [UInt8]) throws(BusError) {
    var offset = 0
    let deadline = monotonicNanoseconds() + 5_000_000_000
    while offset < bytes.count {
      switch UnixSocket.send(socket, bytes[offset...]) {
      case .success(let n): offset += n
      case .failure(let error) where error.errno == EAGAIN:
        guard monotonicNanoseconds() < deadline else {
          if offset > 0 { closed = true }
          throw BusError(call: "send", code: -ETIMEDOUT, message: "the bus took nothing for 5 s")
        }
        var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = poll(&writable, 1, 1000)
      case .failure(let error):
        closed = true
        throw BusError.system("send", errno: error.errno)
      }
    }
  }

  private func nextSerial() -> UInt32 {
    serial &+= 1
    if serial == 0 { serial = 1 }
    return serial
  }

  /// Reads what the socket has; keeps what `wanted` takes. Sets `closed` at
  /// the end of the connection.
  private func readInput() {
    guard !closed else { return }
    if input.receive({ if wanted($0.message) { queue.append($0) } }) == .closed { closed = true }
  }

  /// What is kept of each message read: the reply to the call waiting for
  /// one (from whom it was sent to), signals some subscription (or the
  /// owner bookkeeping) could take, and calls of methods we offer. Anything
  /// else (a signal nobody asked for, a stray reply) is dropped at once,
  /// with its descriptors; a call of a method we do not offer is answered
  /// with an error and dropped.
  private func wanted(_ message: BusMessage) -> Bool {
    switch message.kind {
    case .methodReturn, .error:
      guard let pendingCall, message.replySerial == pendingCall.serial else { return false }
      // The bus itself answers for a destination it cannot reach.
      return pendingCall.replier == nil || message.sender == pendingCall.replier
        || (message.kind == .error && message.sender == "org.freedesktop.DBus")
    case .signal:
      guard let sender = message.sender else { return false }
      if owners.keys.contains(where: { isOwnerChange(of: $0, message) }) { return true }
      return matches.contains { $0.interface == message.interface && isOwner(sender, of: $0.sender) }
    case .methodCall:
      if method(for: message) != nil { return true }
      if message.expectsReply, let sender = message.sender {
        let reply = BusMessageWriter.errorReply(
          serial: nextSerial(), replySerial: message.serial, destination: sender,
          name: "org.freedesktop.DBus.Error.UnknownMethod", text: "passlockd offers no such method")
        try? sendAll(reply)
      }
      return false
    }
  }

  private func method(for message: BusMessage) -> Method? {
    methods.first { $0.path == message.path && $0.interface == message.interface && $0.member == message.member }
  }

  /// Offers `interface.member` on `path`: calls run `handler` from
  /// `process()`, as signals do, and are answered with what it returns.
  public func onMethodCall(path: String, interface: String, member: String, _ handler: @escaping (BusMessage) -> BusMethodReply) {
    methods.append(Method(path: path, interface: interface, member: member, handler: handler))
  }

  private func answer(_ message: BusMessage) {
    guard let method = method(for: message) else { return }
    let reply = method.handler(message)
    guard message.expectsReply, let sender = message.sender else { return }
    switch reply {
    case .values(let values):
      try? sendAll(BusMessageWriter.methodReturn(serial: nextSerial(), replySerial: message.serial, destination: sender, arguments: values))
    case .error(let name, let text):
      try? sendAll(
        BusMessageWriter.errorReply(serial: nextSerial(), replySerial: message.serial, destination: sender, name: name, text: text))
    }
  }

  /// Who may answer a call to `destination`: a unique name itself, the bus
  /// for its own name, the owner of a well-known name we follow; nil (any)
  /// for a name whose owner we do not know.
  private func replier(for destination: String) -> String? {
    if destination.hasPrefix(":") || destination == "org.freedesktop.DBus" { return destination }
    return owners[destination].flatMap { $0.isEmpty ? nil : $0 }
  }

  private func ringWake() {
    var byte: UInt8 = 1
    _ = Glibc.write(wakeWrite, &byte, 1)
  }

  /// Handles everything queued: incoming signals run their handlers here.
  /// Returns false when the connection is gone.
  @discardableResult
  public func process() -> Bool {
    var drained = [UInt8](repeating: 0, count: 64)
    while Glibc.read(wakeFD, &drained, drained.count) > 0 {}
    readInput()
    // Only what is queued now: a handler's own call reads more, and a
    // client that keeps calling must not keep the daemon from its loop
    // (the rest rings `wakeFD` and waits for the next round).
    for _ in 0..<queue.count {
      guard !queue.isEmpty else { break }
      dispatch(queue.removeFirst().message)
    }
    if !queue.isEmpty { ringWake() }
    return !closed
  }

  private func dispatch(_ message: BusMessage) {
    if message.kind == .methodCall { return answer(message) }
    guard message.kind == .signal, let interface = message.interface else { return }
    if interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged", message.sender == "org.freedesktop.DBus" {
      noteOwnerChange(message)
    }
    for match in matches where match.interface == interface {
      guard match.member == nil || match.member == message.member, match.path == nil || match.path == message.path,
        let sender = message.sender, isOwner(sender, of: match.sender)
      else { continue }
      message.rewind()
      if let argument0 = match.argument0 {
        guard message.signature.hasPrefix("s"), (try? message.string()) == argument0 else { continue }
        message.rewind()
      }
      match.handler(message)
    }
  }

  /// Whether unique name `sender` speaks for well-known `name` now (the bus
  /// itself sends as its own name).
  private func isOwner(_ sender: String, of name: String) -> Bool {
    name == "org.freedesktop.DBus" ? sender == name : owners[name] == sender
  }

  /// Keeps `owners` current from NameOwnerChanged (name, old, new).
  private func noteOwnerChange(_ message: BusMessage) {
    defer { message.rewind() }
    guard let name = try? message.string(), owners.keys.contains(name), (try? message.string()) != nil,
      let owner = try? message.string()
    else { return }
    owners[name] = owner
  }

  /// Calls a method and returns its reply. Arguments are basic values.
  /// Signals that arrive meanwhile wait for `process()` (see `wakeFD`).
  public func call(
    _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = [],
    timeoutMicroseconds: UInt64 = 5_000_000
  ) throws(BusError) -> BusMessage {
    try callKeepingOrder(destination, path, interface, member, arguments, timeoutMicroseconds: timeoutMicroseconds).reply.message
  }

  /// Calls a method whose reply carries descriptors (logind's Inhibit): the
  /// reply's descriptor `unixFD()` names, duplicated for the caller to keep.
  public func callForDescriptor(
    _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = []
  ) throws(BusError) -> Int32 {
    let reply = try callKeepingOrder(destination, path, interface, member, arguments).reply
    return try reply.duplicate(try reply.message.unixFD())
  }

  /// The reply, and how many queued messages arrived before it.
  private func callKeepingOrder(
    _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = [],
    timeoutMicroseconds: UInt64 = 5_000_000
  ) throws(BusError) -> (reply: ReceivedMessage, earlier: Int) {
    let sent = nextSerial()
    pendingCall = (sent, replier(for: destination))
    defer { pendingCall = nil }
    try sendAll(
      BusMessageWriter.methodCall(
        serial: sent, destination: destination, path: path, interface: interface, member: member, arguments: arguments))
    let deadline = monotonicNanoseconds() + timeoutMicroseconds * 1000
    // What was read off the socket meanwhile will not show on its fd.
    defer {
      queue.removeAll { $0.message.isReply }  // late or stray replies; calls to us and signals stay
      if !queue.isEmpty { ringWake() }
    }
    while true {
      if let index = queue.firstIndex(where: { $0.message.replySerial == sent && $0.message.isReply }) {
        let received = queue.remove(at: index)
        let reply = received.message
        guard reply.kind == .methodReturn else {
          let text = reply.signature.hasPrefix("s") ? try? reply.string() : nil
          throw BusError(call: "\(interface).\(member)", code: -EIO, name: reply.errorName, message: text)
        }
        return (received, index)
      }
      guard !closed else { throw BusError(call: "\(interface).\(member)", code: -ECONNRESET, message: "the bus connection ended") }
      let now = monotonicNanoseconds()
      guard now < deadline else { throw BusError(call: "\(interface).\(member)", code: -ETIMEDOUT, message: "no reply") }
      var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&readable, 1, Int32(min(1000, (deadline - now) / 1_000_000 + 1)))
      readInput()
    }
  }

  /// org.freedesktop.DBus.Properties.Get, positioned inside the variant.
  public func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws(BusError) -> BusMessage {
    let reply = try call(
      destination, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
    try reply.enterVariant()
    return reply
  }

  /// Subscribes to a signal from `sender`, a well-known name: the bus
  /// delivers only its owner's broadcasts, and a signal sent straight to us
  /// by anyone else is dropped here (its sender is not the owner).
  /// `argument0`: only signals whose first argument is that string.
  public func onSignal(
    sender: String, path: String?, interface: String, member: String?, argument0: String? = nil,
    _ handler: @escaping (BusMessage) -> Void
  ) throws(BusError) {
    var rule = "type='signal',sender='\(sender)',interface='\(interface)'"
    if let path { rule += ",path='\(path)'" }
    if let member { rule += ",member='\(member)'" }
    if let argument0 { rule += ",arg0='\(argument0)'" }
    _ = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", [.string(rule)])
    if sender != "org.freedesktop.DBus" && owners[sender] == nil {
      // Every change of its owner from now on (noted before the answer
      // below is, so none is missed), then its owner now.
      owners[sender] = ""
      let changes =
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(sender)'"
      _ = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", [.string(changes)])
      // Not running now: "" until NameOwnerChanged names its owner.
      if let (reply, earlier) = try? callKeepingOrder(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(sender)])
      {
        owners[sender] = (try? reply.message.string()) ?? ""
        // Changes queued before the answer are older than it.
        let older = queue.prefix(earlier).filter { !isOwnerChange(of: sender, $0.message) }
        queue = older + queue.dropFirst(earlier)
      }
    }
    matches.append(Match(sender: sender, path: path, interface: interface, member: member, argument0: argument0, handler: handler))
  }

  /// Forgets every signal and method handler: their closures, which may
  /// hold the bus's owner (nothing weaker is there to hold it by), are
  /// released with them. For an owner done with the bus.
  public func removeHandlers() {
    matches = []
    methods = []
  }

  private func isOwnerChange(of name: String, _ message: BusMessage) -> Bool {
    defer { message.rewind() }
    return message.kind == .signal && message.member == "NameOwnerChanged" && message.sender == "org.freedesktop.DBus"
      && (try? message.string()) == name
  }
}

/// What a method we offer answers: its return values, or an error.
public enum BusMethodReply {
  case values([BusValue])
  case error(name: String, text: String)
}
