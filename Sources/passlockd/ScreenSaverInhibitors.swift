import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockPOSIX
#endif

/// org.freedesktop.ScreenSaver's Inhibit and UnInhibit on the user's
/// session bus: what browsers (a playing video), video players and
/// presentation tools call to hold the screen saver off, where no desktop
/// answers them. Each inhibitor holds the idle lock off, as logind's
/// do, until UnInhibit or until its caller's connection ends (a crashed
/// browser leaves none behind: NameOwnerChanged).
///
/// The name is taken only while passlockd idle-locks (`[Idle]
/// LockAfterSec`), never from another owner (DO_NOT_QUEUE), and with
/// ALLOW_REPLACEMENT, so a desktop's own service that asks to replace it
/// gets it; and never beside GNOME or KDE (a session whose Desktop names
/// one: their own idle handling answers there, and a desktop service
/// queued behind us would not hear the calls). Released when such a
/// session appears (the daemon answers again once none is left). While
/// another program has it, the connection stays and the name is asked for
/// again when that program lets go of it (NameOwnerChanged), as a queued
/// owner would get it, without queueing behind a desktop that replaced us.
final class ScreenSaverInhibitors {
  static let name = "org.freedesktop.ScreenSaver"
  /// Where clients call it: Chromium and the spec's path, and KDE's older one that Firefox uses.
  static let paths = ["/org/freedesktop/ScreenSaver", "/ScreenSaver"]
  /// The most one connection, and all of them, may hold: a client in a
  /// loop cannot grow the daemon.
  static let perConnection = 64
  static let inAll = 256

  /// What Introspect answers: the two methods offered.
  static let introspection = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
    <node>
     <interface name="org.freedesktop.ScreenSaver">
      <method name="Inhibit"><arg name="application_name" type="s" direction="in"/>\
    <arg name="reason_for_inhibit" type="s" direction="in"/><arg name="cookie" type="u" direction="out"/></method>
      <method name="UnInhibit"><arg name="cookie" type="u" direction="in"/></method>
     </interface>
     <interface name="org.freedesktop.DBus.Introspectable">
      <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
     </interface>
    </node>
    """

  /// One held: as logind's inhibitors are shown and counted, with what
  /// ends it here.
  struct Inhibitor: Equatable {
    var cookie: UInt32
    /// The caller's unique name on the bus.
    var owner: String
    var inhibitor: Logind.Inhibitor
  }

  private(set) var held: [Inhibitor] = []
  let bus: Bus
  private let changed: () -> Void
  private var lastCookie: UInt32 = 0
  private var tokens: [EventLoop.Token] = []
  private let loop: EventLoop

  /// Connects to the session bus ($DBUS_SESSION_BUS_ADDRESS, else the
  /// runtime directory's `bus`) and asks for the name, or waits for it
  /// while another program has it; nil (said in the journal) when there
  /// is no session bus.
  init?(loop: EventLoop, changed: @escaping () -> Void) {
    self.loop = loop
    self.changed = changed
    let address =
      environment("DBUS_SESSION_BUS_ADDRESS") ?? environment("XDG_RUNTIME_DIR").map { "unix:path=\($0)/bus" } ?? ""
    let noBus = { (error: BusError) in Log.info("no \(Self.name) from passlockd: the session bus at '\(address)': \(error)") }
    do throws(BusError) {
      bus = try Bus(address: address, timeoutMicroseconds: 1_000_000)
    } catch {
      noBus(error)
      return nil
    }
    do throws(BusError) {
      // Subscribed first: an owner that lets go right after our request
      // was refused is seen.
      try subscribe()
      try ask()
      // Calls that came meanwhile wait for the loop (the calls above rang
      // `wakeFD`): answered once the daemon holds this object.
    } catch {
      bus.removeHandlers()  // those subscribe() added hold this object
      noBus(error)
      return nil
    }
    for fd in [bus.fd, bus.wakeFD] {
      tokens.append(
        loop.watch(fd) { [self] in
          guard bus.process() else { return end("the session bus connection ended") }
        })
    }
  }

  /// Asks the bus for the name: ours at once, or another program's, whose
  /// letting go we wait for.
  private func ask() throws(BusError) {
    // ALLOW_REPLACEMENT (1) | DO_NOT_QUEUE (4); 1: the primary owner now.
    let answer = try bus.call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName", [.string(Self.name), .uint32(5)],
      timeoutMicroseconds: 1_000_000
    ).uint32()
    // 4: ours already (a grant whose reply came too late before).
    if answer == 1 || answer == 4 {
      nowAnswering()
    } else {
      Log.info("\(Self.name) is another program's on the session bus: its idle inhibitors are its own (taken once it lets go)")
    }
  }

  private func nowAnswering() {
    answering = true
    Log.info("\(Self.name) answered by passlockd: applications' idle inhibitors hold the idle lock off")
  }

  private func subscribe() throws(BusError) {
    for path in Self.paths {
      bus.onMethodCall(path: path, interface: Self.name, member: "Inhibit") { [self] in inhibit($0) }
      bus.onMethodCall(path: path, interface: Self.name, member: "UnInhibit") { [self] in uninhibit($0) }
      // Clients that introspect before they call (dbus-python's proxies, Qt's QDBusInterface).
      bus.onMethodCall(path: path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect") { _ in
        .values([.string(Self.introspection)])
      }
    }
    // A caller gone: its inhibitors with it.
    try bus.onSignal(
      sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"
    ) { [self] message in
      guard let name = try? message.string(), (try? message.string()) != nil, (try? message.string()) == "" else { return }
      if name == Self.name {
        // Its owner let go: ours again, unless another asked first.
        if !answering && !gone { try? ask() }
      } else if held.contains(where: { $0.owner == name }) {
        held.removeAll { $0.owner == name }
        changed()
      }
    }
    // Granted (also when the reply to our request was lost to a timeout).
    try bus.onSignal(sender: "org.freedesktop.DBus", path: nil, interface: "org.freedesktop.DBus", member: "NameAcquired") {
      [self] message in
      guard (try? message.string()) == Self.name, !answering, !gone else { return }
      nowAnswering()
    }
    // A desktop's service asked for the name with REPLACE_EXISTING.
    try bus.onSignal(sender: "org.freedesktop.DBus", path: nil, interface: "org.freedesktop.DBus", member: "NameLost") {
      [self] message in
      guard (try? message.string()) == Self.name, answering else { return }
      answering = false
      Log.info("\(Self.name) no longer answered by passlockd: another program took it (taken again once it lets go)")
      dropInhibitors()
    }
  }

  private func inhibit(_ message: BusMessage) -> BusMethodReply {
    guard answering else { return .error(name: "org.freedesktop.DBus.Error.ServiceUnknown", text: "no longer answered here") }
    guard let owner = message.sender, let application = try? message.string(), let reason = try? message.string() else {
      return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", text: "Inhibit takes (application, reason)")
    }
    guard held.count < Self.inAll, held.filter({ $0.owner == owner }).count < Self.perConnection else {
      return .error(
        name: "org.freedesktop.DBus.Error.LimitsExceeded",
        text: "\(Self.perConnection) inhibitors per connection, \(Self.inAll) in all at most")
    }
    lastCookie &+= 1
    if lastCookie == 0 { lastCookie = 1 }
    let pid = try? bus.call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", [.string(owner)],
      timeoutMicroseconds: 1_000_000
    ).uint32()
    held.append(
      Inhibitor(
        cookie: lastCookie, owner: owner,
        inhibitor: Logind.Inhibitor(
          what: "idle", who: Self.shown(application, 64), why: Self.shown(reason, 128), mode: "block", uid: getuid(), pid: pid ?? 0)))
    changed()
    return .values([.uint32(lastCookie)])
  }

  /// What status and the journal show of a caller's text: at most `limit`
  /// characters, none of them a control character (no forged lines).
  static func shown(_ text: String, _ limit: Int) -> String {
    var shown = String.UnicodeScalarView()
    shown.append(contentsOf: text.unicodeScalars.prefix(limit).map { $0.value < 0x20 || $0.value == 0x7f ? " " : $0 })
    return String(shown)
  }

  private func uninhibit(_ message: BusMessage) -> BusMethodReply {
    guard answering else { return .error(name: "org.freedesktop.DBus.Error.ServiceUnknown", text: "no longer answered here") }
    guard let owner = message.sender, let cookie = try? message.uint32() else {
      return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", text: "UnInhibit takes (cookie)")
    }
    // Only its own: one application cannot end another's.
    guard held.contains(where: { $0.cookie == cookie && $0.owner == owner }) else {
      return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", text: "no inhibitor \(cookie) of this connection")
    }
    held.removeAll { $0.cookie == cookie && $0.owner == owner }
    changed()
    return .values([])
  }

  /// Gives the name back (a desktop that answers it came) and ends.
  func release() {
    if answering {
      _ = try? bus.call(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReleaseName", [.string(Self.name)],
        timeoutMicroseconds: 1_000_000)
    }
    end("released for a desktop that answers it", released: true)
  }

  /// Whether the name is ours now: calls are answered only then (those
  /// still queued when it went are refused).
  private(set) var answering = false
  /// Ended: the daemon lets go of this object.
  private var gone = false

  /// Every inhibitor held goes with the name.
  private func dropInhibitors() {
    guard !held.isEmpty else { return }
    held = []
    changed()
  }

  /// `released`: given back for a desktop (whose session may already be
  /// gone by the time the daemon lets go: it asks again then).
  private func end(_ why: String, released: Bool = false) {
    guard !gone else { return }
    gone = true
    Log.info("\(Self.name) \(answering ? "no longer answered" : "no longer waited for") by passlockd: \(why)")
    answering = false
    for token in tokens { loop.cancel(token) }
    tokens = []
    dropInhibitors()
    // Later: the bus may still be inside process() here, which the daemon
    // dropping this object (and its bus) would pull from under it; calls
    // it still dispatches now are refused (`answering`). Then its
    // handlers, which hold this object, go too, so that it and its
    // connection end when the daemon lets go of it.
    loop.after(milliseconds: 0) { [self] in
      bus.removeHandlers()
      onGone?(released)
    }
  }

  /// Called once ended (the daemon forgets this object), with whether it
  /// was released for a desktop.
  var onGone: ((Bool) -> Void)?
}
