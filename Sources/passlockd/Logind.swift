import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockCore
  import PasslockPOSIX
#endif

/// The parts of systemd-logind's D-Bus API passlockd uses, typed.
final class Logind {
  static let name = "org.freedesktop.login1"
  static let path = "/org/freedesktop/login1"
  static let manager = "org.freedesktop.login1.Manager"
  static let session = "org.freedesktop.login1.Session"

  let bus: Bus
  init(bus: Bus) { self.bus = bus }

  /// What passlockd needs to know about a session (PasslockCore, where the
  /// choice of how to lock it is made: LockPlan).
  typealias SessionInfo = LogindSession

  /// The user's sessions (ListSessions, filtered by uid: a user service is
  /// not inside any session itself).
  func sessions(of uid: uid_t) throws(BusError) -> [SessionInfo] {
    let found = try LogindSessionList.sessions(of: uid, on: bus)
    // A session that ended since the list was made cannot be read: skipped,
    // not a failed refresh (the others, a new one among them, still count).
    return found.compactMap { (id, path) in (try? info(id: id, path: path)) ?? nil }
  }

  /// The session's properties in one call (GetAll); nil for a session that
  /// is not a login of the user's own (LogindSession.isLogin).
  func info(id: String, path: String) throws(BusError) -> SessionInfo? {
    let reply = try bus.call(Self.name, path, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.session)])
    let properties = try reply.properties()
    guard LogindSession.isLogin(sessionClass: properties["Class"]?.string ?? "user") else { return nil }
    var tty = properties["TTY"]?.string ?? ""
    if !tty.isEmpty && !tty.hasPrefix("/") { tty = "/dev/" + tty }
    var seat = ""
    if case .structure(let fields) = properties["Seat"], let name = fields.first?.string { seat = name }
    return SessionInfo(
      id: id, path: path, tty: tty, remote: properties["Remote"]?.bool ?? false, vtNumber: properties["VTNr"]?.uint32 ?? 0,
      type: properties["Type"]?.string ?? "tty", leader: properties["Leader"]?.uint32 ?? 0, seat: seat,
      desktop: properties["Desktop"]?.string ?? "")
  }

  /// The object path of the logind session process `pid` runs in, or nil.
  func sessionPath(ofProcess pid: pid_t) -> String? { try? sessionByPID(pid) }

  private func sessionByPID(_ pid: pid_t) throws(BusError) -> String {
    try bus.call(Self.name, Self.path, Self.manager, "GetSessionByPID", [.uint32(UInt32(bitPattern: pid))]).objectPath()
  }

  /// The user's display session (User.Display): the one logind elects to
  /// show the user's graphical programs, a graphical session before a text
  /// one. libseat attributes a compositor outside every session (a systemd
  /// user service) to it, and so does passlockd. nil if unreadable or none.
  func displaySessionPath(of uid: uid_t) -> String? {
    guard let user = try? bus.call(Self.name, Self.path, Self.manager, "GetUser", [.uint32(uid)]).objectPath(),
      let display = try? bus.property(Self.name, user, "org.freedesktop.login1.User", "Display"),
      (try? display.enter("r", "so")) == true, (try? display.string()) != nil,
      let path = try? display.objectPath(), path != "/"
    else { return nil }
    return path
  }

  /// The session a process of the user's works for: the one it runs in,
  /// or, for one outside every login of the user's (`logins`: a systemd
  /// user service, as uwsm starts compositors and Plasma 6 and GNOME start
  /// KWin and their shell), the user's display session. `displaySession`
  /// keeps logind's answer for the next process asked about.
  /// Only logind's own "no session for this process" counts as outside
  /// every login: any other failure (a timeout, a process gone meanwhile)
  /// is no evidence for any session.
  func sessionServed(byProcess pid: pid_t, logins: Set<String>, displaySession: inout String??) -> String? {
    do throws(BusError) {
      let its = try sessionByPID(pid)
      if logins.contains(its) { return its }
    } catch {
      guard error.name == "org.freedesktop.login1.NoSessionForPID" else { return nil }
    }
    if displaySession == nil { displaySession = displaySessionPath(of: getuid()) }
    return displaySession ?? nil
  }

  /// Whether logind has the session active on its seat (on screen); nil if
  /// unreadable. From logind's seat state file where there is one (root's:
  /// LogindStateFiles): asked as a suspend begins, when a call would wait
  /// behind logind's own work on it (measured under qemu TCG: 44–67 ms of
  /// the 220–300 from PrepareForSleep to the lock VT on screen).
  func isActive(_ session: SessionInfo) -> Bool? {
    if let seat = LogindStateFiles.seat(session.seat) { return seat.active == session.id }
    return try? bus.property(Self.name, session.path, Self.session, "Active").bool()
  }

  /// IdleHint and IdleSinceHint (µs, wall clock) of a session that publishes
  /// them (graphical sessions: GNOME, swayidle's idlehint); nil if unreadable.
  func idleHint(_ session: SessionInfo) -> (idle: Bool, sinceMicroseconds: UInt64)? {
    guard let idle = try? bus.property(Self.name, session.path, Self.session, "IdleHint").bool(),
      let since = try? bus.property(Self.name, session.path, Self.session, "IdleSinceHint").uint64()
    else { return nil }
    return (idle, since)
  }

  /// One inhibitor as ListInhibitors reports it.
  struct Inhibitor: Equatable {
    /// Colon-separated: "sleep:idle", "idle", "handle-lid-switch"…
    var what: String
    var who: String
    var why: String
    /// "block", "block-weak" (systemd 257: a block that root's own
    /// actions may override) or "delay".
    var mode: String
    var uid: UInt32
    var pid: UInt32

    /// A block inhibitor of idle, weak or not: what holds off an idle lock
    /// (an idle lock is no root action that a weak one gives way to).
    var blocksIdle: Bool { (mode == "block" || mode == "block-weak") && what.split(separator: ":").contains("idle") }

    /// "mpv (Playing video, pid 1234)", for the log and `passlock status`.
    var summary: String { "\(who) (\(why.isEmpty ? "" : why + ", ")pid \(pid))" }
  }

  func inhibitors() throws(BusError) -> [Inhibitor] {
    let reply = try bus.call(Self.name, Self.path, Self.manager, "ListInhibitors")
    var found: [Inhibitor] = []
    guard try reply.enter("a", "(ssssuu)") else { return [] }
    while try reply.enter("r", "ssssuu") {
      found.append(
        Inhibitor(
          what: try reply.string(), who: try reply.string(), why: try reply.string(), mode: try reply.string(),
          uid: try reply.uint32(), pid: try reply.uint32()))
      try reply.exit()
    }
    try reply.exit()
    return found
  }

  /// A sleep *delay* inhibitor: logind waits (up to InhibitDelayMaxUSec) until
  /// the returned descriptor is closed.
  func inhibitSleep() throws(BusError) -> Int32 {
    try bus.callForDescriptor(
      Self.name, Self.path, Self.manager, "Inhibit",
      [.string("sleep"), .string("passlock"), .string("Lock the session before sleep"), .string("delay")])
  }

  func setLockedHint(_ session: SessionInfo, _ locked: Bool) {
    do { _ = try bus.call(Self.name, session.path, Self.session, "SetLockedHint", [.bool(locked)]) } catch {
      Log.warning("SetLockedHint(\(locked)) on session \(session.id): \(error)")
    }
  }

  func lockSession(_ id: String) throws(BusError) {
    _ = try bus.call(Self.name, Self.path, Self.manager, "LockSession", [.string(id)])
  }
}
