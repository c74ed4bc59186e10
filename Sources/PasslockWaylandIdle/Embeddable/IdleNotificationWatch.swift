import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Asks a compositor to say when its seat has had no input for a while:
/// ext-idle-notify-v1's `get_idle_notification`, which honours the
/// compositor's idle inhibitors (a fullscreen video through
/// zwp_idle_inhibit, sway's `inhibit_idle`) and counts input the compositor
/// sees, which a terminal's access time does not. Spoken over the
/// compositor's socket directly, as swayidle does through libwayland: the
/// daemon links no Wayland library and runs no helper for it.
///
/// One watch is one connection: the registry, a sync to know every global
/// was announced, then the first seat and the notifier bound and the
/// notification asked for. The timeout counts from the request (wlroots arms
/// it then), so a watch started again counts afresh; closing the connection
/// is the only teardown.
public final class IdleNotificationWatch {
  /// What the compositor said, in order.
  public enum Event: Equatable, Sendable {
    /// The notification is in place: the compositor times idle from now.
    case watching
    /// No input for the timeout, and no idle inhibitor active.
    case idle
    /// Input again after `idle`.
    case resumed
    /// The compositor offers no ext_idle_notifier_v1 (or no seat).
    case unsupported
    /// The connection is over: closed, a protocol error, a malformed message.
    case ended(String)
  }

  public let socket: FileDescriptor
  private var framer = WaylandWire.Framer()
  private var seatName: UInt32?
  private var notifierName: UInt32?
  private var settled = false

  // The client's object ids, fixed: one of each per connection.
  static let display: UInt32 = 1
  static let registry: UInt32 = 2
  static let globalsDone: UInt32 = 3
  static let seat: UInt32 = 4
  static let notifier: UInt32 = 5
  static let notification: UInt32 = 6

  /// Sends the first requests on `socket` (connected, non-blocking), which
  /// the watch now owns. `timeoutMilliseconds`: the idle time asked for.
  public init(socket: FileDescriptor, timeoutMilliseconds: UInt32) throws(SystemError) {
    self.socket = socket
    self.timeoutMilliseconds = timeoutMilliseconds
    // wl_display.get_registry, then wl_display.sync: its done comes after
    // every global already announced.
    try send([
      WaylandWire.Message(object: Self.display, opcode: 1, arguments: WaylandWire.Argument.encode([.uint(Self.registry)])),
      WaylandWire.Message(object: Self.display, opcode: 0, arguments: WaylandWire.Argument.encode([.uint(Self.globalsDone)])),
    ])
  }

  private let timeoutMilliseconds: UInt32

  public func close() { socket.close() }

  /// Reads what the socket holds (the event loop calls this when readable)
  /// and says what it meant; `.ended` is the last event.
  public func readable() -> [Event] {
    var events: [Event] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    // A bounded round: a compositor that never stops talking cannot hold the
    // daemon's loop; the rest is read when the loop comes back.
    for _ in 0..<16 {
      let count = retryingInterrupts { buffer.withUnsafeMutableBytes { read(socket.rawValue, $0.baseAddress, $0.count) } }
      // ECONNRESET: it closed with our requests unread.
      if count == 0 || (count < 0 && errno == ECONNRESET) { return events + [.ended("the compositor closed the connection")] }
      if count < 0 {
        return errno == EAGAIN ? events : events + [.ended(SystemError("read").description)]
      }
      framer.append(buffer[0..<count])
      do {
        while let message = try framer.next() {
          let event = try handle(message)
          if let event { events.append(event) }
          if case .ended = event { return events }
        }
      } catch {
        return events + [.ended("malformed message from the compositor: \(error.why)")]
      }
    }
    return events
  }

  private func handle(_ message: WaylandWire.Message) throws(WaylandWire.MalformedMessage) -> Event? {
    var arguments = WaylandWire.ArgumentReader(message.arguments)
    switch (message.object, message.opcode) {
    case (Self.display, 0):  // wl_display.error
      _ = try arguments.uint()
      let code = try arguments.uint()
      let text = try arguments.string() ?? ""
      return .ended("the compositor reported error \(code): \(text)")
    case (Self.registry, 0):  // wl_registry.global
      let name = try arguments.uint()
      let interface = try arguments.string()
      if interface == "wl_seat", seatName == nil { seatName = name }
      if interface == "ext_idle_notifier_v1" { notifierName = name }
      return nil
    case (Self.globalsDone, 0) where !settled:  // wl_callback.done
      settled = true
      return askForTheNotification()
    case (Self.notification, 0): return .idle  // ext_idle_notification_v1.idled
    case (Self.notification, 1): return .resumed  // ext_idle_notification_v1.resumed
    default: return nil  // the seat's capabilities, delete_id, a global removed: nothing to do
    }
  }

  /// Binds the seat (version 1: only its capabilities event) and the
  /// notifier (version 1), and asks for the notification.
  private func askForTheNotification() -> Event {
    guard let seatName, let notifierName else { return .unsupported }
    let bind = { (name: UInt32, interface: String, id: UInt32) in
      WaylandWire.Message(
        object: Self.registry, opcode: 0, arguments: WaylandWire.Argument.encode([.uint(name), .string(interface), .uint(1), .uint(id)]))
    }
    do {
      try send([
        bind(seatName, "wl_seat", Self.seat), bind(notifierName, "ext_idle_notifier_v1", Self.notifier),
        // ext_idle_notifier_v1.get_idle_notification(id, timeout, seat)
        WaylandWire.Message(
          object: Self.notifier, opcode: 1,
          arguments: WaylandWire.Argument.encode([.uint(Self.notification), .uint(timeoutMilliseconds), .uint(Self.seat)])),
      ])
    } catch {
      return .ended(error.description)
    }
    return .watching
  }

  /// A few hundred bytes in all: a socket buffer takes them at once, and one
  /// that does not (a compositor stopped with a full buffer) ends the watch.
  private func send(_ messages: [WaylandWire.Message]) throws(SystemError) {
    let bytes = messages.flatMap { $0.bytes }
    switch UnixSocket.send(socket, bytes[...]) {
    case .success(let sent) where sent == bytes.count: return
    case .success: throw SystemError("send", errno: EAGAIN)
    case .failure(let error): throw error
    }
  }
}
