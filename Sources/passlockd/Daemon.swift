import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
  import PasslockTimers
#endif

/// passlockd: watches logind for suspend, Lock and idle, and keeps one
/// `passlock lock` per session while it is locked. Single-threaded: every
/// event arrives through `loop`. It never draws on a terminal itself.
///
/// This file: its state, start-up and what triggers a lock. By concern, the
/// rest: Daemon+Locking.swift (lock screens: start, restart, adopt),
/// Daemon+SleepHandshake.swift (carrying out SleepHandshake: the locks
/// before sleep, the inhibitor, sleep-ready), Daemon+EventSources.swift
/// (bus, children, compositor sockets, watchdog), Daemon+CompositorIdle.swift
/// (idle timed by a session's compositor), HyprlandLockRestore.swift (the
/// warning Hyprland's users need), ScreenSaverInhibitors.swift
/// (applications' idle inhibitors on the session bus), TrackedSession.swift
/// (everything held about one session); SleepHook.swift is the system sleep hook's
/// own run (`--sleep-hook`, as root), not the daemon's. Which sessions it
/// locks is LockPlan's call, when the machine may sleep SleepHandshake's,
/// what a status answer means StatusReading's (PasslockCore). The state
/// below is changed only by these files.
final class Daemon {
  let config: Config
  let bus: Bus
  let logind: Logind
  let uid = getuid()
  /// The lock screen (direct mode) and the console holder (VT mode).
  let passlock: String
  var consoleHolder: String { Executable.sibling("passlock-vt", of: passlock) }
  let gatekeeper = GatekeeperClient.locate()
  let records = LockRecords.inRuntimeDirectory()
  lazy var idle = IdleWatcher(timeoutSeconds: config.int("Idle.LockAfterSec"), loop: loop) { [self] id in
    if let session = sessions[id] { lock(session.info, reason: "idle", grace: true) }
  }

  /// The user's sessions by id, each with everything held about it (its
  /// lock, problem, note, restarts: TrackedSession).
  var sessions: [String: TrackedSession] = [:]
  /// What holds the idle lock off: the user's own idle inhibitors in
  /// logind (block mode), then applications' through
  /// org.freedesktop.ScreenSaver.
  var idleInhibitors: [Logind.Inhibitor] = []
  var logindIdleInhibitors: [Logind.Inhibitor] = []
  /// org.freedesktop.ScreenSaver on the session bus, while passlockd
  /// answers it or waits for its owner to let go of it.
  var screenSaver: ScreenSaverInhibitors?
  /// No session bus was there: not asked again (a log line per session change).
  var noSessionBus = false
  var inhibitor: Int32?
  /// The sleep handshake, and what the gatekeeper last said of the passcode.
  var handshake = SleepHandshake()
  lazy var inhibitRetries = RetryChain(loop: loop)
  /// Why no inhibitor is held although a passcode is set (logind refused it).
  var inhibitorProblem: String?
  let sleepHook = SleepHookFiles.inRuntimeDirectory()
  /// Every event source: the bus, children, timers, the control socket.
  let loop: EventLoop

  init(config: Config, bus: Bus, passlock: String, loop: EventLoop) {
    self.config = config
    self.loop = loop
    self.bus = bus
    self.logind = Logind(bus: bus)
    self.passlock = passlock
  }

  // MARK: Start-up

  func start() throws(BusError) {
    sleepHook?.announce()
    try subscribe()
    try refreshSessions()
    refreshPasscode()  // takes the inhibitor unless the gatekeeper says no passcode is set
    refreshIdleInhibitors()
    // A daemon killed while sessions were locked locks them again.
    for id in records?.all() ?? [] {
      guard let session = sessions[id] else {
        records?.remove(id)
        continue
      }
      if let orphan = records?.survivingLocker(id) {
        // A lock screen or console holder that outlived its daemon (the unit
        // has KillMode=process) keeps its terminal: never a second one on the
        // same session, never a gap. Watched until it ends.
        adopt(orphan, session.info)
        continue
      }
      lock(session.info, reason: "restart")
    }
    if config.bool("Lock.OnStart") { lockAll(reason: "start") }
    watchBus()
    watchChildren()
    watchUninstall()
    watchCompositorSockets()
    checkHyprlandLockRestore()
    startWatchdog()
    ServiceManager.notify("READY=1")
    Log.info(
      "passlockd ready: \(sessions.count) session(s), passcode \(passcodeWords), inhibitor \(inhibitor == nil ? "not held" : "held")"
    )
  }

  func subscribe() throws(BusError) {
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "PrepareForSleep") {
      [self] message in
      prepareForSleep((try? message.bool()) ?? false)
    }
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "SessionNew") {
      [self] _ in
      try? refreshSessions()
    }
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "SessionRemoved") {
      [self] message in
      if let id = try? message.string() { sessionRemoved(id) }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: Logind.session, member: "Lock") { [self] message in
      if let session = session(at: message.path) { lock(session, reason: "logind Lock") }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged") {
      [self] message in
      if message.path == Logind.path {
        managerPropertiesChanged(message)
      } else if let session = session(at: message.path) {
        followIdleHint(session)
      }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: Logind.session, member: "Unlock") { [self] message in
      logindUnlock(path: message.path)
    }
    // polkit coming (after logind refused our inhibitor for want of it).
    try bus.onSignal(
      sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: "NameOwnerChanged", argument0: "org.freedesktop.PolicyKit1"
    ) { [self] message in
      _ = try? message.string()
      _ = try? message.string()
      if let owner = try? message.string(), !owner.isEmpty, handshake.locks, !handshake.preparing { takeInhibitor() }
    }
    try bus.onSignal(
      sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: "NameOwnerChanged", argument0: Logind.name
    ) { [self] message in
      guard let name = try? message.string(), name == Logind.name, (try? message.string()) != nil,
        let owner = try? message.string()
      else { return }
      logindOwnerChanged(present: !owner.isEmpty)
    }
  }

  // MARK: Triggers
  //
  // What makes a session lock, and how a new trigger is added:
  // - Suspend (PrepareForSleep) goes through SleepHandshake (`sleepEvent`),
  //   never straight to `lock`: the sleep must wait until every lock is on
  //   screen, and only the handshake lets it go.
  // - A trigger the user or another program asks for (a command, a key, a
  //   desktop's own event) asks logind to lock the session
  //   (`logind.lockSession`, as `askLogindToLock` does for `passlock lock
  //   --session`), and its Lock signal arrives below like loginctl's: one
  //   path for every such request, and whoever else listens to logind's
  //   Lock (a desktop's own shield) sees it too.
  // - A trigger the daemon decides itself, for one session it tracks
  //   (idle, a lock screen that survived a restart, Lock.OnStart), calls
  //   `lock(session, reason:)` directly; the reason goes to the log.
  // `lock` keeps one lock per session, refuses without a passcode, and
  // chooses the method (LockPlan); a trigger never starts a locker itself.

  func prepareForSleep(_ going: Bool) {
    if going {
      // The lock screens start first; whether a passcode was set or removed
      // behind our back is checked meanwhile, and the inhibitor goes as soon
      // as every lock screen has drawn, not after that check (SleepHandshake).
      // A grace ends as a sleep begins: the lock screens already up hear it
      // now (the rest see the suspend in their clocks when it comes).
      // (A lock screen not ready yet hears it once it is: startLocker. An
      // adopted one, a previous daemon's, is only polled: its pid may be
      // someone else's by now, whom SIGUSR1 would kill; it sees the suspend
      // in its own clocks.)
      signalReadyLockScreens()
      sleepHook?.clearReady()
      sleepEvent(.prepareForSleep(sessions: sessionsToShowLocks()))
    } else {
      // Back from sleep: hold logind off again for the next time, and have
      // the lock screens draw themselves again (the clock has moved).
      sleepHook?.clearReady()
      sleepEvent(.resumed)
      signalReadyLockScreens()
    }
  }

  /// SIGUSR1 to every lock screen (or console holder) of ours that is up:
  /// it draws itself whole again and ends a grace. Only our children, and
  /// only once ready (their handler is installed by then; before, SIGUSR1
  /// would kill them).
  func signalReadyLockScreens() {
    for locker in sessions.values.compactMap({ $0.lock?.locker }) where locker.isReady { _ = kill(locker.pid, SIGUSR1) }
  }

  func logindUnlock(path: String?) {
    // Ignored by default: logind's Unlock comes from anyone allowed to run
    // `loginctl unlock-session`; the passcode stays the only way in.
    guard config.bool("Lock.UnlockOnLogindUnlock"), let session = session(at: path),
      let locker = sessions[session.id]?.lock?.locker
    else { return }
    Log.info("session \(session.id): logind Unlock ends the lock (UnlockOnLogindUnlock=yes)")
    locker.kill()
    unlocked(session)
  }

  func logindOwnerChanged(present: Bool) {
    if !present {
      Log.warning("logind left the bus; keeping lock state, waiting for it to return")
      releaseInhibitor()
      sleepEvent(.inhibitorLost)
      return
    }
    Log.info("logind is back: re-reading sessions, taking a new inhibitor")
    try? refreshSessions()
    refreshPasscode()  // takes the inhibitor unless no passcode is set
    refreshIdleInhibitors()
    for session in sessions.values where session.isLocked { logind.setLockedHint(session.info, true) }
  }

  /// `passlock set/remove` and the control socket ask for this: a passcode
  /// appearing or disappearing changes whether we hold an inhibitor.
  func refreshPasscode() {
    let pending: PendingRequest
    do { pending = try gatekeeper.start(.status) } catch { return passcodeChecked(unanswered(error)) }
    // A gatekeeper stopped (by the user's own SIGSTOP) must not stop the daemon.
    guard pending.output.becomesReadable(withinMilliseconds: Self.statusDeadlineMilliseconds) else {
      pending.cancel()
      return passcodeChecked(.unknown("\(gatekeeper.path) did not answer within \(Self.statusDeadlineMilliseconds / 1000) s"))
    }
    passcodeChecked(answer(of: pending))
  }

  /// How long the daemon waits for the gatekeeper's status when it waits at all.
  static let statusDeadlineMilliseconds: Int64 = 3_000

  /// A finished request's reading.
  func answer(of pending: PendingRequest) -> StatusReading {
    do { return StatusReading(try pending.finish { _, _, _ in false }) } catch { return unanswered(error) }
  }

  func unanswered(_ error: ClientError) -> StatusReading {
    if case .missingGatekeeper = error { return StatusReading(error) }
    return .unknown("cannot run \(gatekeeper.path): \(error)")
  }

  /// The same check without waiting for it: the loop reads the answer. On
  /// the way to sleep, lock screens already starting must not wait for it.
  func refreshPasscodeInBackground() {
    let pending: PendingRequest
    do { pending = try gatekeeper.start(.status) } catch { return passcodeChecked(unanswered(error)) }
    var watch: EventLoop.Token?
    watch = loop.watch(pending.output.rawValue) { [self] in
      loop.cancel(watch)
      passcodeChecked(answer(of: pending))
    }
  }

  /// What the gatekeeper said about the store (StatusReading): locking on
  /// or off, the inhibitor, idle timers. No answer is never "no passcode":
  /// the last answer stands, and before any, sessions are locked.
  func passcodeChecked(_ reading: StatusReading) {
    switch reading {
    case .passcodeSet, .noPasscode: reportGatekeeper(problem: nil)
    case .storeRefused(let why): reportGatekeeper(problem: why, locking: true)
    case .gatekeeperUnavailable(let why): reportGatekeeper(problem: why, locking: false)
    case .unknown(let why): reportGatekeeper(problem: why, locking: handshake.locks)
    }
    let before = handshake.passcode
    sleepEvent(.statusChecked(reading))
    if handshake.passcode != before {
      switch handshake.passcode {
      case .set: Log.info("a passcode is set: locking is on")
      case .notSet: Log.info("no passcode is set: nothing to lock with")
      case .unknown: break
      }
    }
    // Nothing to lock with: a refused inhibitor is nothing to worry about
    // (and nothing to log: no inhibitor is held either).
    if !handshake.locks { inhibitorProblem = nil }
    updateIdleTimers()
    for session in sessionInfos where session.isGraphical { followIdleHint(session) }
  }

  /// How the log and status name what is known of the passcode.
  var passcodeWords: String {
    switch handshake.passcode {
    case .set: return "set"
    case .notSet: return "not set"
    case .unknown: return "not known yet (locking as if set)"
    }
  }

  /// Why the gatekeeper cannot say whether a passcode exists (a setuid
  /// helper without its privileges, a refused store, no answer): logged at
  /// err once per change and shown by `passlock status`, with whether
  /// sessions are locked meanwhile.
  var gatekeeperProblem: String?

  func reportGatekeeper(problem: String?, locking: Bool = true) {
    guard problem != gatekeeperProblem else { return }
    gatekeeperProblem = problem
    if let problem {
      Log.error(
        locking
          ? "cannot read the passcode store: \(problem); sessions are locked all the same"
          : "cannot read the passcode store, so nothing will be locked: \(problem)")
    } else {
      Log.info("the passcode store is readable again")
    }
  }

  /// Adds and updates sessions from ListSessions. Sessions missing from the
  /// list are kept: a logind that just came back may not know them yet, and
  /// lock state must survive that. Only SessionRemoved forgets a session.
  func refreshSessions() throws(BusError) {
    for session in try logind.sessions(of: uid) {
      if sessions[session.id] == nil {
        sessions[session.id] = TrackedSession(session)
        followIdleHint(session)
      } else {
        sessions[session.id]?.info = session
      }
    }
    updateIdleTimers()
    answerScreenSaver()
  }

  /// Takes org.freedesktop.ScreenSaver while passlockd idle-locks and no
  /// session is GNOME's or KDE's (ScreenSaverInhibitors); gives it back
  /// when such a session comes, and takes it again once none is left.
  func answerScreenSaver() {
    let desktop = sessions.values.contains { SelfLockingDesktop(desktop: $0.info.desktop) != nil }
    if let screenSaver, desktop {
      screenSaver.release()
    } else if screenSaver == nil, !noSessionBus, !desktop, idle.timeoutSeconds > 0 {
      screenSaver = ScreenSaverInhibitors(loop: loop) { [self] in idleHoldChanged() }
      noSessionBus = screenSaver == nil
      screenSaver?.onGone = { [self] released in
        screenSaver = nil
        idleHoldChanged()
        // The desktop's session may have ended before it was gone. (Not
        // after a lost connection: a bus that drops every connection would
        // be reconnected to in a loop.)
        if released { answerScreenSaver() }
      }
    }
  }

  /// The Manager's properties changed: when BlockInhibited (or systemd
  /// 257's BlockWeakInhibited) is among them, an idle inhibitor may have
  /// come or gone.
  func managerPropertiesChanged(_ message: BusMessage) {
    guard (try? message.string()) == Logind.manager, let changed = try? message.properties() else { return }
    let invalidated = (try? message.strings()) ?? []
    let watched = ["BlockInhibited", "BlockWeakInhibited"]
    if watched.contains(where: { changed[$0] != nil || invalidated.contains($0) }) { refreshIdleInhibitors() }
  }

  /// Idle inhibitors of the user's own (a video player, a presentation, a
  /// script: `systemd-inhibit --what=idle`) hold the idle lock off; another
  /// user's do not, or anyone could keep our sessions open. (Applications
  /// on the user's session bus: ScreenSaverInhibitors.)
  func refreshIdleInhibitors() {
    let held: [Logind.Inhibitor]
    do { held = try logind.inhibitors().filter { $0.blocksIdle && $0.uid == uid } } catch {
      Log.warning("cannot list logind's inhibitors: \(error)")
      return
    }
    logindIdleInhibitors = held
    idleHoldChanged()
  }

  /// The idle lock held off, or not, by every inhibitor there is.
  func idleHoldChanged() {
    let held = logindIdleInhibitors + (screenSaver?.held ?? []).map { $0.inhibitor }
    guard held != idleInhibitors else { return }
    let wasHeld = !idleInhibitors.isEmpty
    idleInhibitors = held
    if held.isEmpty {
      Log.info("no idle inhibitor any more: the idle time counts again from now")
    } else if !wasHeld {
      Log.info("idle lock held off by \(held.map { $0.summary }.joined(separator: "; "))")
    }
    idle.holdOff(!held.isEmpty)
    updateIdleTimers()
    for session in sessionInfos where session.isGraphical { followIdleHint(session) }
  }

  /// A graphical session's IdleHint (it has no TTY whose atime could tell),
  /// unless its compositor times it.
  func followIdleHint(_ session: Logind.SessionInfo) {
    guard session.isGraphical, !session.remote else { return }
    if case .asked = sessions[session.id]?.compositorIdle { return }
    guard let hint = logind.idleHint(session) else { return }
    idle.hint(
      session.id, idle: hint.idle, sinceMicroseconds: hint.sinceMicroseconds,
      enabled: handshake.locks && !isLocked(session.id))
  }

  func sessionRemoved(_ id: String) {
    guard let session = sessions[id] else { return }
    Log.info("session \(id): logged out")
    session.lock?.locker?.kill()
    stopIdleTimers(id)
    sessions[id] = nil
    records?.remove(id)
    sleepEvent(.sessionRemoved(id))
    // Sessions its console lock covered are locked on their own again.
    for other in uncover(by: id) { lock(other, reason: "the session whose console lock covered it ended") }
    answerScreenSaver()  // the desktop that answered it may have been this session's
  }

  func isLocked(_ id: String) -> Bool { sessions[id]?.isLocked == true }

  /// What logind knows of each session.
  var sessionInfos: [Logind.SessionInfo] { sessions.values.map { $0.info } }

  /// The session whose object path a logind signal came from.
  func session(at path: String?) -> Logind.SessionInfo? { sessions.values.first { $0.info.path == path }?.info }

  /// Idle timers for every unlocked session that gets a lock screen: its
  /// compositor's where it has one that can (Daemon+CompositorIdle), else
  /// its terminal's (IdleWatcher; a graphical session's IdleHint follows
  /// logind's signals).
  func updateIdleTimers() {
    let enabled = handshake.locks && idle.timeoutSeconds > 0 && !idle.heldOff
    var byCompositor: Set<String> = []
    for session in sessionInfos {
      if isLocked(session.id) {
        stopCompositorIdle(session.id)
      } else if followCompositorIdle(session, enabled: enabled) {
        byCompositor.insert(session.id)
      }
    }
    idle.update(sessions: lockableSessions().filter { !isLocked($0.id) && !byCompositor.contains($0.id) }, enabled: handshake.locks)
  }

  /// `passlock lock --session`: every path goes through logind's Lock signal
  /// (for every local session, as before sleep: one that cannot be locked is
  /// reported when its Lock arrives).
  func askLogindToLock() -> String {
    var failures: [String] = []
    for session in localSessions() {
      do { try logind.lockSession(session.id) } catch { failures.append("\(session.id): \(error)") }
    }
    return failures.isEmpty ? "ok\n" : "error: " + failures.joined(separator: "; ") + "\n"
  }
}
