import Glibc
import PasslockPOSIX

/// One connection to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else
/// /run/dbus/system_bus_socket), spoken directly (Wire.swift): EXTERNAL
/// authentication, descriptor passing, synchronous method calls, signal
/// subscriptions. No libsystemd: passlockd links nothing but libc. Handlers
/// run only from `process()`, never inside a call: signals that arrive while
/// a call waits are queued, and `wakeFD` becomes readable so that the event
/// loop comes back for them (the socket no longer shows them).
public final class Bus {
  public let fd: Int32
  /// Readable while queued signals wait for `process()`.
  public let wakeFD: Int32
  private let wakeWrite: Int32
  /// Our name on the bus (Hello's answer).
  public private(set) var uniqueName = ""
  private var serial: UInt32 = 0
  /// The socket's receiving side; it owns what is not yet framed.
  private let input: BusInput
  private var queue: [BusMessage] = []
  /// The call waiting for its reply: its serial and who may answer it.
  private var pendingCall: (serial: UInt32, replier: String?)?
  private var matches: [Match] = []
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

  public init() throws(BusError) {
    let address = environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
    fd = try Self.connect(address)
    input = BusInput(fd: fd)
    let wake: (read: Int32, write: Int32)
    do { wake = try closeOnExecPipe() } catch {
      Glibc.close(fd)
      throw BusError(call: "pipe", code: -error.errno)
    }
    for end in [wake.read, wake.write] { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    wakeFD = wake.read
    wakeWrite = wake.write
    // From here deinit closes the descriptors, also when init throws.
    try authenticate()
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    uniqueName = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello").string()
  }

  deinit {
    queue = []
    for descriptor in [fd, wakeFD, wakeWrite] { Glibc.close(descriptor) }
  }

  /// The first `unix:path=` or `unix:abstract=` address in `address`.
  static func connect(_ address: String) throws(BusError) -> Int32 {
    for entry in address.split(separator: ";") where entry.hasPrefix("unix:") {
      var socketAddress: UnixSocketAddress?
      for pair in entry.dropFirst(5).split(separator: ",") {
        if pair.hasPrefix("path=") { socketAddress = UnixSocketAddress(path: unescape(pair.dropFirst(5))) }
        if pair.hasPrefix("abstract=") { socketAddress = UnixSocketAddress(abstract: unescape(pair.dropFirst(9))) }
      }
      guard let socketAddress else { continue }
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { throw BusError(call: "socket", code: -errno) }
      guard socketAddress.withSockaddr({ Glibc.connect(fd, $0, $1) }) == 0 else {
        let code = -errno
        Glibc.close(fd)
        throw BusError(call: "connect \(address)", code: code)
      }
      return fd
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

  /// SASL EXTERNAL as our uid, asking for descriptor passing (Inhibit answers with one).
  private func authenticate() throws(BusError) {
    let uid = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
    try sendAll(Array("\0AUTH EXTERNAL \(uid)\r\n".utf8))
    guard try readLine().hasPrefix("OK ") else { throw BusError(call: "authenticate", code: -EACCES, message: "the bus refused EXTERNAL") }
    try sendAll(Array("NEGOTIATE_UNIX_FD\r\n".utf8))
    guard try readLine().hasPrefix("AGREE_UNIX_FD") else {
      throw BusError(call: "authenticate", code: -EPROTO, message: "the bus does not pass descriptors")
    }
    try sendAll(Array("BEGIN\r\n".utf8))
  }

  /// One line of the (blocking, still) authentication exchange, within 5 s:
  /// a bus that never answers must not hold up the daemon's start for ever.
  private func readLine() throws(BusError) -> String {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    let deadline = monotonicNanoseconds() + 5_000_000_000
    while line.count < 4096 {
      let now = monotonicNanoseconds()
      guard now < deadline else { throw BusError(call: "authenticate", code: -ETIMEDOUT) }
      var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&readable, 1, Int32((deadline - now) / 1_000_000 + 1)) == 0 { continue }
      let n = Glibc.read(fd, &byte, 1)
      if n < 0 && errno == EINTR { continue }
      guard n == 1 else { throw BusError(call: "authenticate", code: n == 0 ? -ECONNRESET : -errno) }
      if byte == UInt8(ascii: "\n") {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
      }
      line.append(byte)
    }
    throw BusError(call: "authenticate", code: -EPROTO, message: "line too long")
  }

  /// Sends all of `bytes` within 5 s. A message only partly sent leaves the
  /// stream unframeable for the bus: then the connection counts as lost.
  private func sendAll(_ bytes: [UInt8]) throws(BusError) {
    var offset = 0
    let deadline = monotonicNanoseconds() + 5_000_000_000
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n < 0 {
        if errno == EINTR { continue }
        if errno == EAGAIN {
          guard monotonicNanoseconds() < deadline else {
            if offset > 0 { closed = true }
            throw BusError(call: "send", code: -ETIMEDOUT)
          }
          var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
          _ = poll(&writable, 1, 1000)
          continue
        }
        closed = true
        throw BusError(call: "send", code: -errno)
      }
      offset += n
    }
  }

  /// Reads what the socket has; keeps what `wanted` takes. Sets `closed` at
  /// the end of the connection.
  private func readInput() {
    guard !closed else { return }
    if input.receive({ if wanted($0) { queue.append($0) } }) == .closed { closed = true }
  }

  /// What is kept of each message read: the reply to the call waiting for
  /// one (from whom it was sent to), and signals some subscription (or the
  /// owner bookkeeping) could take. Anything else (a method call to us, a
  /// signal nobody asked for, a stray reply) is dropped at once, with its
  /// descriptors.
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
      return false
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
    while !queue.isEmpty {
      let message = queue.removeFirst()
      dispatch(message)
    }
    return !closed
  }

  private func dispatch(_ message: BusMessage) {
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
    try callKeepingOrder(destination, path, interface, member, arguments, timeoutMicroseconds: timeoutMicroseconds).reply
  }

  /// The reply, and how many queued messages arrived before it.
  private func callKeepingOrder(
    _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = [],
    timeoutMicroseconds: UInt64 = 5_000_000
  ) throws(BusError) -> (reply: BusMessage, earlier: Int) {
    serial &+= 1
    if serial == 0 { serial = 1 }
    let sent = serial
    pendingCall = (sent, replier(for: destination))
    defer { pendingCall = nil }
    try sendAll(
      Wire.methodCall(serial: sent, destination: destination, path: path, interface: interface, member: member, arguments: arguments))
    let deadline = monotonicNanoseconds() + timeoutMicroseconds * 1000
    // What was read off the socket meanwhile will not show on its fd.
    defer {
      queue.removeAll { $0.kind != .signal }  // late or stray replies
      if !queue.isEmpty { ringWake() }
    }
    while true {
      if let index = queue.firstIndex(where: { $0.replySerial == sent && ($0.kind == .methodReturn || $0.kind == .error) }) {
        let reply = queue.remove(at: index)
        guard reply.kind == .methodReturn else {
          let text = reply.signature.hasPrefix("s") ? try? reply.string() : nil
          throw BusError(call: "\(interface).\(member)", code: -EIO, name: reply.errorName, message: text)
        }
        return (reply, index)
      }
      guard !closed else { throw BusError(call: "\(interface).\(member)", code: -ECONNRESET) }
      let now = monotonicNanoseconds()
      guard now < deadline else { throw BusError(call: "\(interface).\(member)", code: -ETIMEDOUT) }
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
        owners[sender] = (try? reply.string()) ?? ""
        // Changes queued before the answer are older than it.
        let older = queue.prefix(earlier).filter { !isOwnerChange(of: sender, $0) }
        queue = older + queue.dropFirst(earlier)
      }
    }
    matches.append(Match(sender: sender, path: path, interface: interface, member: member, argument0: argument0, handler: handler))
  }

  private func isOwnerChange(of name: String, _ message: BusMessage) -> Bool {
    defer { message.rewind() }
    return message.kind == .signal && message.member == "NameOwnerChanged" && message.sender == "org.freedesktop.DBus"
      && (try? message.string()) == name
  }
}

/// A basic value to send.
public enum BusValue {
  case string(String)
  case objectPath(String)
  case bool(Bool)
  case uint32(UInt32)
}

/// A failed bus call: the call, its negative errno, and D-Bus's error name.
public struct BusError: Error, CustomStringConvertible {
  public var call: String
  public var code: Int32
  public var name: String?
  public var message: String?

  public init(call: String, code: Int32, name: String? = nil, message: String? = nil) {
    self.call = call
    self.code = code
    self.name = name
    self.message = message
  }

  public var description: String {
    if let name { return "\(call): \(name): \(message ?? "")" }
    if let message { return "\(call): \(message)" }
    return "\(call): \(String(cString: strerror(-code)))"
  }
}

/// sd_notify's protocol, only where systemd asked for it (NOTIFY_SOCKET is set).
public enum ServiceManager {
  public static func notify(_ state: String) {
    guard let path = environment("NOTIFY_SOCKET"),
      let address = path.hasPrefix("@")
        ? UnixSocketAddress(abstract: String(path.dropFirst())) : path.hasPrefix("/") ? UnixSocketAddress(path: path) : nil
    else { return }
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return }
    defer { close(fd) }
    _ = state.withCString { text in address.withSockaddr { sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, $1) } }
  }

  /// The watchdog interval systemd expects pings within, if any (WATCHDOG_USEC,
  /// for this process when WATCHDOG_PID says which).
  public static func watchdogMicroseconds() -> UInt64? {
    guard let text = environment("WATCHDOG_USEC"), let usec = UInt64(text), usec > 0 else { return nil }
    if let pid = environment("WATCHDOG_PID"), pid_t(pid) != getpid() { return nil }
    return usec
  }
}
