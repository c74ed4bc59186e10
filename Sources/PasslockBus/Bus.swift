import CSystemd
import Glibc

/// One connection to the system bus (sd_bus_open_system, which honours
/// DBUS_SYSTEM_BUS_ADDRESS). The only owner of the sd_bus object: calls are
/// synchronous, and after every call the queue is drained, because signals that
/// arrived during the call sit in sd-bus's queue and will not wake the fd.
public final class Bus {
  let bus: OpaquePointer
  private var matches: [Match] = []

  public init() throws(BusError) {
    var opened: OpaquePointer?
    let rc = sd_bus_open_system(&opened)
    guard rc >= 0, let opened else { throw BusError(call: "sd_bus_open_system", code: rc) }
    bus = opened
  }

  deinit {
    matches.removeAll()
    sd_bus_flush_close_unref(bus)
  }

  /// The descriptor to watch for input.
  public var fd: Int32 { sd_bus_get_fd(bus) }

  /// Handles everything queued: incoming signals run their handlers here.
  /// Returns false when the connection is gone.
  @discardableResult
  public func process() -> Bool {
    while true {
      let rc = sd_bus_process(bus, nil)
      if rc < 0 { return false }
      if rc == 0 { return true }
    }
  }

  /// Calls a method and returns its reply. Arguments are basic values.
  public func call(
    _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = [],
    timeoutMicroseconds: UInt64 = 5_000_000
  ) throws(BusError) -> BusMessage {
    var message: OpaquePointer?
    var rc = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
    guard rc >= 0, let message else { throw BusError(call: "new_method_call \(member)", code: rc) }
    defer { sd_bus_message_unref(message) }
    for argument in arguments {
      rc = argument.append(to: message)
      guard rc >= 0 else { throw BusError(call: "append \(member)", code: rc) }
    }
    var error = sd_bus_error()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    rc = sd_bus_call(bus, message, timeoutMicroseconds, &error, &reply)
    // Signals that came in while we waited are queued, not signalled on the fd.
    defer { _ = process() }
    guard rc >= 0, let reply else {
      let name = error.name.map { String(cString: $0) }
      let text = error.message.map { String(cString: $0) }
      throw BusError(call: "\(interface).\(member)", code: rc, name: name, message: text)
    }
    return BusMessage(owning: reply)
  }

  /// org.freedesktop.DBus.Properties.Get, positioned inside the variant.
  public func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws(BusError) -> BusMessage {
    let reply = try call(
      destination, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
    try reply.enterVariant()
    return reply
  }

  /// Subscribes to a signal from `sender` (a well-known name: sd-bus resolves
  /// it, so signals sent by any other connection are ignored).
  public func onSignal(
    sender: String, path: String?, interface: String, member: String?, _ handler: @escaping (BusMessage) -> Void
  ) throws(BusError) {
    let match = Match(handler)
    var slot: OpaquePointer?
    let rc = sd_bus_match_signal(bus, &slot, sender, path, interface, member, busSignalTrampoline, match.context)
    guard rc >= 0 else { throw BusError(call: "match \(interface).\(member ?? "*")", code: rc) }
    match.slot = slot
    matches.append(match)
  }
}

/// A signal subscription: the slot and the Swift handler it calls.
final class Match {
  let handler: (BusMessage) -> Void
  var slot: OpaquePointer?
  lazy var context: UnsafeMutableRawPointer = Unmanaged.passUnretained(self).toOpaque()

  init(_ handler: @escaping (BusMessage) -> Void) { self.handler = handler }
  deinit { if let slot { sd_bus_slot_unref(slot) } }
}

/// The C callback: captures nothing, finds its Match through `userdata`.
private func busSignalTrampoline(
  message: OpaquePointer?, userdata: UnsafeMutableRawPointer?, error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
  guard let message, let userdata else { return 0 }
  let match = Unmanaged<Match>.fromOpaque(userdata).takeUnretainedValue()
  match.handler(BusMessage(borrowing: message))
  return 0
}

/// A basic value to send.
public enum BusValue {
  case string(String)
  case objectPath(String)
  case bool(Bool)
  case uint32(UInt32)

  func append(to message: OpaquePointer) -> Int32 {
    switch self {
    case .string(let s): return s.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
    case .objectPath(let s): return s.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
    case .bool(let b):
      var value: Int32 = b ? 1 : 0
      return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value)
    case .uint32(let u):
      var value = u
      return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
    }
  }
}

/// A received message, read in order with the typed readers below.
public final class BusMessage {
  let message: OpaquePointer

  init(owning message: OpaquePointer) { self.message = message }
  init(borrowing message: OpaquePointer) {
    self.message = message
    sd_bus_message_ref(message)
  }
  deinit { sd_bus_message_unref(message) }

  public var path: String? { sd_bus_message_get_path(message).map { String(cString: $0) } }
  public var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }

  private func read<T>(_ type: Character, _ initial: T) throws(BusError) -> T {
    var value = initial
    let rc = sd_bus_message_read_basic(message, CChar(UInt8(ascii: type.unicodeScalars.first!)), &value)
    guard rc > 0 else { throw BusError(call: "read \(type)", code: rc == 0 ? -ENODATA : rc) }
    return value
  }

  public func string() throws(BusError) -> String {
    let pointer: UnsafePointer<CChar>? = try read("s", nil)
    return pointer.map { String(cString: $0) } ?? ""
  }

  public func objectPath() throws(BusError) -> String {
    let pointer: UnsafePointer<CChar>? = try read("o", nil)
    return pointer.map { String(cString: $0) } ?? ""
  }

  public func bool() throws(BusError) -> Bool { try read("b", Int32(0)) != 0 }
  public func uint32() throws(BusError) -> UInt32 { try read("u", UInt32(0)) }
  public func uint64() throws(BusError) -> UInt64 { try read("t", UInt64(0)) }

  /// A file descriptor from the message, duplicated (close-on-exec) so it
  /// outlives the message.
  public func fileDescriptor() throws(BusError) -> Int32 {
    let fd = try read("h", Int32(-1))
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
    guard copy >= 0 else { throw BusError(call: "dup inhibitor fd", code: -errno) }
    return copy
  }

  public func enterVariant() throws(BusError) {
    var type: CChar = 0
    var contents: UnsafePointer<CChar>?
    _ = sd_bus_message_peek_type(message, &type, &contents)
    let rc = sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), contents)
    guard rc > 0 else { throw BusError(call: "enter variant", code: rc) }
  }

  /// Enters an array or struct; false at the end of the enclosing array.
  public func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
    let rc = sd_bus_message_enter_container(message, CChar(UInt8(ascii: type.unicodeScalars.first!)), contents)
    guard rc >= 0 else { throw BusError(call: "enter \(type)\(contents)", code: rc) }
    return rc > 0
  }

  public func exit() throws(BusError) {
    let rc = sd_bus_message_exit_container(message)
    guard rc >= 0 else { throw BusError(call: "exit container", code: rc) }
  }
}

/// A failed sd-bus call: the call, its negative errno, and D-Bus's error name.
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
    return "\(call): \(String(cString: strerror(-code)))"
  }
}

/// sd_notify, only where systemd asked for it (NOTIFY_SOCKET is set).
public enum ServiceManager {
  public static func notify(_ state: String) {
    guard getenv("NOTIFY_SOCKET") != nil else { return }
    _ = sd_notify(0, state)
  }

  /// The watchdog interval systemd expects pings within, if any.
  public static func watchdogMicroseconds() -> UInt64? {
    var usec: UInt64 = 0
    return sd_watchdog_enabled(0, &usec) > 0 ? usec : nil
  }
}
