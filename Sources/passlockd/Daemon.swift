import Dispatch
import Glibc
import PasslockBus
import PasslockClient
import PasslockCore
import PasslockPOSIX

/// passlockd: watches logind for suspend, Lock and idle, and keeps one
/// `passlock lock` per session while it is locked. Confined to the main
/// queue; it never draws on a terminal itself.
@MainActor
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
  lazy var idle = IdleWatcher(timeoutSeconds: config.int("Idle.LockAfterSec")) { [unowned self] id in
    if let session = sessions[id] { lock(session, reason: "idle") }
  }

  private(set) var sessions: [String: Logind.SessionInfo] = [:]
  private(set) var lockers: [String: Locker] = [:]
  /// Sessions that could not be locked, and why (shown in status, logged).
  private(set) var problems: [String: String] = [:]
  private(set) var inhibitor: Int32?
  private(set) var passcodeSet = false
  private var preparingForSleep = false
  private var sleepSignalAt: UInt64 = 0
  private var restarts: [String: RestartBackoff] = [:]
  private var inhibitRetry = 0
  /// Console holders that outlived a previous daemon, by session.
  private(set) var adopted: [String: pid_t] = [:]
  private var sources: [DispatchSourceProtocol] = []

  init(config: Config, bus: Bus, passlock: String) {
    self.config = config
    self.bus = bus
    self.logind = Logind(bus: bus)
    self.passlock = passlock
  }

  // MARK: Start-up

  func start() throws(BusError) {
    try subscribe()
    try refreshSessions()
    refreshPasscode()  // takes the inhibitor when a passcode exists
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
        adopt(orphan, session)
        continue
      }
      lock(session, reason: "restart")
    }
    if config.bool("Lock.OnStart") { lockAll(reason: "start") }
    watchBus()
    watchChildren()
    watchUninstall()
    startWatchdog()
    ServiceManager.notify("READY=1")
    Log.info(
      "passlockd ready: \(sessions.count) session(s), passcode \(passcodeSet ? "set" : "not set"), inhibitor \(inhibitor == nil ? "not held" : "held")"
    )
  }

  private func subscribe() throws(BusError) {
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "PrepareForSleep") {
      [unowned self] message in
      MainActor.assumeIsolated { prepareForSleep((try? message.bool()) ?? false) }
    }
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "SessionNew") {
      [unowned self] _ in
      MainActor.assumeIsolated { try? refreshSessions() }
    }
    try bus.onSignal(sender: Logind.name, path: Logind.path, interface: Logind.manager, member: "SessionRemoved") {
      [unowned self] message in
      MainActor.assumeIsolated { if let id = try? message.string() { sessionRemoved(id) } }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: Logind.session, member: "Lock") { [unowned self] message in
      MainActor.assumeIsolated {
        if let session = sessions.values.first(where: { $0.path == message.path }) { lock(session, reason: "logind Lock") }
      }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged") {
      [unowned self] message in
      MainActor.assumeIsolated {
        if let session = sessions.values.first(where: { $0.path == message.path }) { followIdleHint(session) }
      }
    }
    try bus.onSignal(sender: Logind.name, path: nil, interface: Logind.session, member: "Unlock") { [unowned self] message in
      MainActor.assumeIsolated { logindUnlock(path: message.path) }
    }
    try bus.onSignal(
      sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: "NameOwnerChanged"
    ) { [unowned self] message in
      MainActor.assumeIsolated {
        guard let name = try? message.string(), name == Logind.name, (try? message.string()) != nil,
          let owner = try? message.string()
        else { return }
        logindOwnerChanged(present: !owner.isEmpty)
      }
    }
  }

  // MARK: Triggers

  private func prepareForSleep(_ going: Bool) {
    preparingForSleep = going
    if going {
      sleepSignalAt = monotonicNanoseconds()
      refreshPasscode()
      guard passcodeSet else {
        releaseInhibitor()
        return
      }
      lockAll(reason: "sleep")
      releaseIfEveryLockerIsReady()
    } else {
      // Back from sleep: hold logind off again for the next time, and have
      // the overlays drop what was typed in the dark.
      if passcodeSet { takeInhibitor() }
      for locker in lockers.values where locker.isReady { _ = kill(locker.pid, SIGUSR1) }
    }
  }

  private func logindUnlock(path: String?) {
    // Ignored by default: logind's Unlock comes from anyone allowed to run
    // `loginctl unlock-session`; the passcode stays the only way in.
    guard config.bool("Lock.UnlockOnLogindUnlock"),
      let session = sessions.values.first(where: { $0.path == path }), let locker = lockers[session.id]
    else { return }
    Log.info("session \(session.id): logind Unlock ends the lock (UnlockOnLogindUnlock=yes)")
    locker.kill()
    lockers[session.id] = nil
    unlocked(session)
  }

  private func logindOwnerChanged(present: Bool) {
    if !present {
      Log.warning("logind left the bus; keeping lock state, waiting for it to return")
      releaseInhibitor()
      return
    }
    Log.info("logind is back: re-reading sessions, taking a new inhibitor")
    try? refreshSessions()
    refreshPasscode()
    if passcodeSet && !preparingForSleep { takeInhibitor() }
    for id in lockers.keys { if let session = sessions[id] { logind.setLockedHint(session, true) } }
  }

  /// `passlock set/remove` and the control socket ask for this: a passcode
  /// appearing or disappearing changes whether we hold an inhibitor.
  func refreshPasscode() {
    let result: AuthResult?
    do { result = try gatekeeper.run(.status) { _, _, _ in false } } catch {
      result = nil
      reportGatekeeper(problem: "cannot run \(gatekeeper.path): \(error)")
    }
    if let result {
      reportGatekeeper(problem: result.code == .ok ? nil : result.message ?? "passlock-auth failed (\(result.code))")
    }
    let status = result.flatMap { StoreStatus($0) }
    let now = status?.passcodeSet ?? false
    if now != passcodeSet { Log.info(now ? "a passcode is set: locking is on" : "no passcode is set: nothing to lock with") }
    passcodeSet = now
    if passcodeSet && !preparingForSleep { takeInhibitor() }
    if !passcodeSet { releaseInhibitor() }
    idle.update(sessions: lockableSessions().filter { lockers[$0.id] == nil }, enabled: passcodeSet)
    for session in sessions.values where session.isGraphical { followIdleHint(session) }
  }

  /// Why the gatekeeper cannot say whether a passcode exists (a setuid
  /// helper without its privileges, a refused store): logged at err once per
  /// change and shown by `passlock status`, since nothing locks meanwhile.
  private(set) var gatekeeperProblem: String?

  private func reportGatekeeper(problem: String?) {
    guard problem != gatekeeperProblem else { return }
    gatekeeperProblem = problem
    if let problem {
      Log.error("cannot read the passcode store, so nothing will be locked: \(problem)")
    } else {
      Log.info("the passcode store is readable again")
    }
  }

  /// Adds and updates sessions from ListSessions. Sessions missing from the
  /// list are kept: a logind that just came back may not know them yet, and
  /// lock state must survive that. Only SessionRemoved forgets a session.
  func refreshSessions() throws(BusError) {
    for session in try logind.sessions(of: uid) {
      let known = sessions[session.id] != nil
      sessions[session.id] = session
      if !known { followIdleHint(session) }
    }
    idle.update(sessions: lockableSessions().filter { lockers[$0.id] == nil }, enabled: passcodeSet)
  }

  /// A graphical session's IdleHint (it has no TTY whose atime could tell).
  private func followIdleHint(_ session: Logind.SessionInfo) {
    guard session.isGraphical, !session.remote, let hint = logind.idleHint(session) else { return }
    idle.hint(
      session.id, idle: hint.idle, sinceMicroseconds: hint.sinceMicroseconds,
      enabled: passcodeSet && lockers[session.id] == nil && adopted[session.id] == nil)
  }

  private func sessionRemoved(_ id: String) {
    guard sessions[id] != nil else { return }
    Log.info("session \(id): logged out")
    lockers[id]?.kill()
    lockers[id] = nil
    records?.remove(id)
    problems[id] = nil
    sessions[id] = nil
    idle.stop(id)
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

  // MARK: Locking

  /// How `session` is locked, or why not (LockPlan decides).
  func plan(_ session: Logind.SessionInfo) -> LockPlan {
    LockPlan(session, consoleMode: config["Console.Mode"], canOpen: { access($0, R_OK | W_OK) == 0 })
  }

  /// The user's sessions at this machine, by id; remote ones are left alone.
  func localSessions() -> [Logind.SessionInfo] {
    sessions.values.filter { plan($0) != .remote }.sorted { $0.id < $1.id }
  }

  /// The local sessions that get a lock screen.
  func lockableSessions() -> [Logind.SessionInfo] {
    localSessions().filter { plan($0).locks }
  }

  func lockAll(reason: String) {
    for session in localSessions() { lock(session, reason: reason) }
  }

  func lock(_ session: Logind.SessionInfo, reason: String) {
    guard lockers[session.id] == nil, adopted[session.id] == nil else { return }  // one lock per session, never stacked
    guard passcodeSet else {
      Log.info("session \(session.id): \(reason) — no passcode is set, nothing to lock with")
      return
    }
    switch plan(session) {
    case .remote:
      Log.info("session \(session.id): \(reason) — a remote session, left alone")
      return
    case .cannot(let why):
      problems[session.id] = "cannot lock: \(why)"
      Log.warning("session \(session.id): \(reason) — cannot lock: \(why)")
      return
    case .virtualConsole, .terminal: break
    }
    problems[session.id] = nil
    guard startLocker(session) else { return }
    Log.info("session \(session.id): locked (\(reason)) on \(session.tty.isEmpty ? "VT \(session.vtNumber)" : session.tty)")
    logind.setLockedHint(session, true)
    idle.stop(session.id)
  }

  /// What runs the lock, or why nothing can (pre-flight: never lock what
  /// could not be unlocked — physlock users lost consoles that way).
  func lockCommand(_ session: Logind.SessionInfo) -> Result<[String], LockProblem> {
    if case .virtualConsole(let vt) = plan(session) {
      guard access(consoleHolder, X_OK) == 0, access(passlock, X_OK) == 0 else {
        return .failure(LockProblem(text: "the console holder \(consoleHolder) or \(passlock) is missing"))
      }
      return .success([consoleHolder, "--vt", String(vt), "--ready-fd", "3"])
    }
    guard access(passlock, X_OK) == 0 else { return .failure(LockProblem(text: "\(passlock) is missing")) }
    let record = records.map { ["--record", $0.path(session.id)] } ?? []
    return .success([passlock, "lock", "--tty", session.tty, "--ready-fd", "3"] + record)
  }

  struct LockProblem: Error { var text: String }

  @discardableResult
  private func startLocker(_ session: Logind.SessionInfo) -> Bool {
    let command: [String]
    switch lockCommand(session) {
    case .success(let ready): command = ready
    case .failure(let problem):
      problems[session.id] = "cannot lock: \(problem.text)"
      Log.error("session \(session.id): refusing to lock: \(problem.text)")
      return false
    }
    do {
      let locker = try Locker(sessionID: session.id, command: command) { [unowned self] in
        problems[session.id] = nil
        releaseIfEveryLockerIsReady()
      }
      lockers[session.id] = locker
      records?.add(session.id, locker: locker.pid)
      return true
    } catch {
      problems[session.id] = "cannot start the lock screen: \(error)"
      Log.error("session \(session.id): cannot start \(command[0]): \(error)")
      return false
    }
  }

  private func unlocked(_ session: Logind.SessionInfo) {
    Log.info("session \(session.id): unlocked")
    records?.remove(session.id)
    restarts[session.id] = nil
    logind.setLockedHint(session, false)
    idle.update(sessions: lockableSessions().filter { lockers[$0.id] == nil }, enabled: passcodeSet)
    followIdleHint(session)
  }

  /// A locker ended. Exit 0 is the only unlock; anything else (a crash, a
  /// kill) starts a new one at once, with a backoff if it keeps dying.
  private func lockerExited(pid: pid_t, status: Int32) {
    guard let (id, locker) = lockers.first(where: { $0.value.pid == pid }) else { return }
    locker.forget()
    lockers[id] = nil
    guard let session = sessions[id] else { return }
    if status == 0 {
      unlocked(session)
      return
    }
    if status == 3, case .virtualConsole = plan(session) {
      // passlock-vt could not take the console: the display server on that
      // VT does not let go of it. Nothing is locked; say so loudly, let a
      // pending sleep go on (logind would stop waiting anyway), and retry.
      problems[id] = "cannot lock: the display server on VT \(session.vtNumber) does not let go of the console"
      Log.error("session \(id): \(problems[id]!); retrying")
      releaseIfEveryLockerIsReady()
    }
    var backoff = restarts[id] ?? RestartBackoff()
    let delay = backoff.failed(afterRunning: Double(monotonicNanoseconds() - locker.startedAt) / 1e9)
    restarts[id] = backoff
    Log.warning("session \(id): the lock screen exited with \(status); starting it again in \(delay) ms")
    let restart = { [unowned self] in
      if lockers[id] == nil, let session = sessions[id] { startLocker(session) }
    }
    if delay == 0 {
      restart()
    } else {
      DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(delay)) { MainActor.assumeIsolated(restart) }
    }
  }

  /// Watches a locker we did not start (it survived a daemon restart). Not
  /// our child, so no exit status: its end is noticed by polling once a
  /// second, and only while one exists. A clean unlock removes the console
  /// holder's state file, or the lock screen's record (`--record`).
  private func adopt(_ survivor: LockRecords.Survivor, _ session: Logind.SessionInfo) {
    let pid = survivor.pid
    let what = survivor.isConsoleHolder ? "console holder" : "lock screen"
    let proof = survivor.isConsoleHolder ? "/run/passlock-vt.state" : records?.path(session.id) ?? ""
    Log.info("session \(session.id): the \(what) \(pid) survived a restart; keeping it")
    adopted[session.id] = pid
    logind.setLockedHint(session, true)
    let timer = DispatchSource.makeTimerSource(queue: .main)
    timer.schedule(deadline: .now() + 1, repeating: 1)
    timer.setEventHandler { [unowned self] in
      MainActor.assumeIsolated {
        // EPERM: the pid now belongs to someone else's process, so ours is gone.
        guard kill(pid, 0) == -1 && (errno == ESRCH || errno == EPERM) else { return }
        timer.cancel()
        adopted[session.id] = nil
        if access(proof, F_OK) == 0 {
          Log.warning("session \(session.id): the adopted \(what) died; locking again")
          lock(session, reason: "holder died")
        } else {
          unlocked(session)
        }
      }
    }
    timer.resume()
    sources.append(timer)
  }

  // MARK: The sleep handshake

  private func takeInhibitor() {
    guard inhibitor == nil else { return }
    do {
      inhibitor = try logind.inhibitSleep()
      inhibitRetry = 0
    } catch {
      // Right after resume logind may still answer "operation in progress".
      inhibitRetry += 1
      let delay = min(5000, 50 << min(inhibitRetry, 7))
      Log.warning("Inhibit failed (\(error)); retrying in \(delay) ms")
      DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(delay)) { [unowned self] in
        MainActor.assumeIsolated { if passcodeSet && !preparingForSleep { takeInhibitor() } }
      }
    }
  }

  private func releaseInhibitor() {
    guard let fd = inhibitor else { return }
    close(fd)
    inhibitor = nil
  }

  /// Lets the machine sleep once every lockable session shows its lock screen.
  private func releaseIfEveryLockerIsReady() {
    guard preparingForSleep, inhibitor != nil else { return }
    let pending = lockableSessions().filter {
      problems[$0.id] == nil && adopted[$0.id] == nil && lockers[$0.id]?.isReady != true
    }
    guard pending.isEmpty else { return }
    releaseInhibitor()
    let elapsed = Double(monotonicNanoseconds() - sleepSignalAt) / 1_000_000
    Log.info("every lock screen is up \(Int(elapsed)) ms after PrepareForSleep; sleep may proceed")
  }

  // MARK: Event sources

  private func watchBus() {
    let source = DispatchSource.makeReadSource(fileDescriptor: bus.fd, queue: .main)
    source.setEventHandler { [unowned self] in
      MainActor.assumeIsolated {
        if !bus.process() {
          Log.error("lost the system bus; exiting so systemd restarts passlockd")
          exit(1)
        }
      }
    }
    source.resume()
    sources.append(source)
    bus.process()
  }

  private func watchChildren() {
    let source = DispatchSource.makeSignalSource(signal: SIGCHLD, queue: .main)
    source.setEventHandler { [unowned self] in
      MainActor.assumeIsolated {
        var status: Int32 = 0
        while true {
          let pid = waitpid(-1, &status, WNOHANG)
          if pid <= 0 { break }
          lockerExited(pid: pid, status: exitCode(fromWaitStatus: status))
        }
      }
    }
    source.resume()
    sources.append(source)
  }

  /// Exit status when passlock was uninstalled under us; the unit neither
  /// restarts on it nor calls it a failure (a restart would only fail to exec
  /// again and again).
  static let uninstalledStatus: Int32 = 69

  /// Exits cleanly once the gatekeeper is removed from the system (the
  /// package was removed): without it nothing can be locked or unlocked.
  private func watchUninstall() {
    guard let watch = RemovalWatch(path: gatekeeper.path) else { return }
    let source = DispatchSource.makeReadSource(fileDescriptor: watch.fd, queue: .main)
    source.setEventHandler {
      MainActor.assumeIsolated {
        guard watch.fileIsGone() else { return }
        Log.info("\(watch.path) was removed (passlock was uninstalled); passlockd exits")
        exit(Daemon.uninstalledStatus)
      }
    }
    source.resume()
    sources.append(source)
  }

  private func startWatchdog() {
    guard let usec = ServiceManager.watchdogMicroseconds() else { return }
    let timer = DispatchSource.makeTimerSource(queue: .main)
    timer.schedule(deadline: .now(), repeating: .microseconds(Int(usec / 2)))
    timer.setEventHandler { ServiceManager.notify("WATCHDOG=1") }
    timer.resume()
    sources.append(timer)
  }
}
