import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// passlockd's locking: which command locks a session, starting and
/// restarting lock screens, adopting the ones a previous daemon left.
extension Daemon {
  /// How `session` is locked, or why not (LockPlan decides). `onScreen`
  /// and `compositor` only where they matter: when a lock starts.
  func plan(
    _ session: Logind.SessionInfo, onScreen: Bool? = nil, seatShared: Bool = false, compositor: String? = nil,
    selfLocking: SelfLockingDesktop? = nil
  ) -> LockPlan {
    LockPlan(
      session, consoleMode: config["Console.Mode"], seatShared: seatShared, onScreen: onScreen, compositor: compositor,
      waylandLock: config["Wayland.Lock"], selfLocking: selfLocking, overDesktop: config.bool("Lock.OverDesktop"),
      canOpen: { access($0, R_OK | W_OK) == 0 })
  }

  /// The desktop that locks `session` by itself, if any (looked for, as the
  /// compositor is, only as a lock starts and for `passlock status`).
  func selfLockingDesktop(of session: Logind.SessionInfo) -> SelfLockingDesktop? {
    SelfLockingDesktops.desktop(of: session, logins: loginPaths, logind: logind)
  }

  /// The compositor to lock `session` in, if any: looked for only as a lock
  /// starts (it connects to the user's compositors and asks logind), and
  /// not again until the session unlocks once one refused.
  func compositor(for session: Logind.SessionInfo) -> String? {
    guard config["Wayland.Lock"] == "in-session", !session.remote, sessions[session.id]?.inSessionRefused != true else { return nil }
    return waylandCompositor(showing: session)
  }

  /// The Wayland compositor that shows `session`, if any (WaylandCompositors):
  /// a compositor in none of our logins is a user service's.
  func waylandCompositor(showing session: Logind.SessionInfo) -> String? {
    WaylandCompositors.display(of: session, logins: loginPaths, logind: logind)
  }

  /// The object paths of the user's sessions: a process of theirs outside
  /// all of them is a systemd user service's (Logind.sessionServed).
  var loginPaths: Set<String> { Set(sessions.values.map { $0.info.path }) }

  /// The user's sessions at this machine, by id; remote ones are left alone.
  func localSessions() -> [Logind.SessionInfo] {
    sessionInfos.filter { !$0.remote }.sorted { $0.id < $1.id }
  }

  /// The local sessions that get a lock screen.
  func lockableSessions() -> [Logind.SessionInfo] {
    sessionInfos.filter { plan($0).locks }.sorted { $0.id < $1.id }
  }

  func lockAll(reason: String) {
    for session in localSessions() { lock(session, reason: reason) }
  }

  /// `seatShared`: the console holder just refused because another user
  /// has a session on the seat (this lock only: the next one tries the
  /// console again).
  /// An idle lock gets the configured grace ([Idle] GraceSec); no other does.
  func lock(_ session: Logind.SessionInfo, reason: String, seatShared: Bool = false, grace: Bool = false) {
    // Only a session still tracked (an adopted locker's timer may outlive its logout).
    guard sessions[session.id] != nil else { return }
    // One lock per session, never stacked.
    guard !isLocked(session.id) else {
      Log.info("session \(session.id): \(reason) — already locked")
      return
    }
    guard handshake.locks else {
      Log.info("session \(session.id): \(reason) — no passcode is set, nothing to lock with")
      return
    }
    sessions[session.id]?.note = nil
    let onScreen = session.vtNumber > 0 && !session.seat.isEmpty ? logind.isActive(session) : nil
    let chosen = plan(
      session, onScreen: onScreen, seatShared: seatShared, compositor: compositor(for: session),
      selfLocking: selfLockingDesktop(of: session))
    if case .desktop(let name) = chosen {
      // Its own lock screen comes by itself (on this Lock, before this
      // sleep): no second lock on top, and nothing for a sleep to wait for.
      sessions[session.id]?.problem = nil
      Log.info("session \(session.id): \(reason) — left to \(name)'s own lock screen (Lock.OverDesktop=yes puts passlock's on top)")
      sleepEvent(.leftToDesktop(session.id))
      return
    }
    // Switching is locked on this seat already: nothing of it can come on
    // screen (an in-session lock is the compositor's, whatever is on screen).
    if !chosen.isInSession, let cover = consoleLock(coveringSeatOf: session) { return coverWith(cover, session, reason: reason) }
    switch chosen {
    case .remote:
      Log.info("session \(session.id): \(reason) — a remote session, left alone")
      return
    case .desktop:
      return  // left to it above
    case .cannot(let why):
      sessions[session.id]?.problem = "cannot lock: \(why)"
      Log.warning("session \(session.id): \(reason) — cannot lock: \(why)")
      sleepEvent(.cannotLock(session.id))
      return
    case .virtualConsole, .terminal, .inSession: break
    }
    sessions[session.id]?.problem = nil
    // Not while a sleep begins, nor after a lock screen of this session
    // failed since its last unlock (a restart's wait must not turn into
    // an idle lock with a grace).
    let graceAllowed = grace && !handshake.preparing && (sessions[session.id]?.restarts.quickFailures ?? 1) == 0
    let graceMilliseconds = graceAllowed ? config.int("Idle.GraceSec") * 1000 : 0
    guard startLocker(session, chosen, graceMilliseconds: graceMilliseconds) else { return }
    let place: String
    switch chosen {
    case .inSession(let display): place = "in-session (\(display))"
    default: place = "on " + (session.tty.isEmpty ? "VT \(session.vtNumber)" : session.tty)
    }
    Log.info("session \(session.id): locked (\(reason)) \(place)")
    logind.setLockedHint(session, true)
    stopIdleTimers(session.id)
    guard case .virtualConsole = chosen else { return }
    // One console lock locks switching for the whole seat: the user's other
    // sessions there cannot come on screen until it unlocks.
    for other in sessionInfos
    where other.id != session.id && other.seat == session.seat && !other.seat.isEmpty && other.vtNumber > 0 && !isLocked(other.id)
      && plan(other).locks
    {
      coverWith(session.id, other, reason: reason)
    }
  }

  /// The session whose console lock holds the seat `session` is on, if any.
  func consoleLock(coveringSeatOf session: Logind.SessionInfo) -> String? {
    guard session.vtNumber > 0, !session.seat.isEmpty else { return nil }
    return sessions.values.first { $0.id != session.id && $0.lock?.isConsoleLock == true && $0.info.seat == session.seat }?.id
  }

  /// `session` counts as locked by `cover`'s console lock (recorded with its
  /// holder's pid, so a restarted daemon adopts both).
  func coverWith(_ cover: String, _ session: Logind.SessionInfo, reason: String) {
    sessions[session.id]?.lock = .covered(by: cover)
    sessions[session.id]?.problem = nil
    if let pid = sessions[cover]?.lock?.pid { records?.add(session.id, locker: pid) }
    Log.info("session \(session.id): locked (\(reason)) by session \(cover)'s console lock")
    logind.setLockedHint(session, true)
    stopIdleTimers(session.id)
    sleepEvent(.lockPresented(session.id))
  }

  /// What runs the lock, or why nothing can (pre-flight: never lock what
  /// could not be unlocked — physlock users lost consoles that way).
  /// `graceMilliseconds` above 0: an idle lock's grace, `--grace-ms`.
  func lockCommand(_ session: Logind.SessionInfo, _ plan: LockPlan, graceMilliseconds: Int = 0) -> Result<[String], LockProblem> {
    let grace = graceMilliseconds > 0 ? [Self.graceOption, String(graceMilliseconds)] : []
    if case .virtualConsole(let vt) = plan {
      guard access(consoleHolder, X_OK) == 0, access(passlock, X_OK) == 0 else {
        return .failure(LockProblem(text: "the console holder \(consoleHolder) or \(passlock) is missing"))
      }
      return .success([consoleHolder, "--vt", String(vt), "--ready-fd", "3"] + grace)
    }
    guard access(passlock, X_OK) == 0 else { return .failure(LockProblem(text: "\(passlock) is missing")) }
    let record = records.map { ["--record", $0.path(session.id)] } ?? []
    if case .inSession = plan { return .success([passlock, "lock", "--wayland", "--ready-fd", "3"] + record + grace) }
    // The leader's /proc entry names the terminal's foreground job at once.
    let leader = session.leader > 0 ? ["--leader", String(session.leader)] : []
    return .success([passlock, "lock", "--tty", session.tty, "--ready-fd", "3"] + leader + record + grace)
  }

  static let graceOption = "--grace-ms"

  /// `command` without its grace: what a lock screen that replaces one runs.
  static func withoutGrace(_ command: [String]) -> [String] {
    guard let index = command.firstIndex(of: graceOption), index + 1 < command.count else { return command }
    return Array(command[..<index] + command[(index + 2)...])
  }

  struct LockProblem: Error { var text: String }

  @discardableResult
  func startLocker(_ session: Logind.SessionInfo, _ plan: LockPlan, graceMilliseconds: Int = 0) -> Bool {
    switch lockCommand(session, plan, graceMilliseconds: graceMilliseconds) {
    case .success(let command):
      switch plan {
      case .virtualConsole: return startLocker(session, command: command, kind: .consoleHolder)
      case .inSession(let display):
        // The daemon's environment, with the compositor found for this session.
        // (WAYLAND_SOCKET, an inherited connection, would win over the display.)
        let environment =
          ProcessEnvironment.current().filter { !$0.hasPrefix("WAYLAND_DISPLAY=") && !$0.hasPrefix("WAYLAND_SOCKET=") }
          + ["WAYLAND_DISPLAY=" + display]
        return startLocker(session, command: command, kind: .wayland, environment: environment)
      default: return startLocker(session, command: command, kind: .terminal)
      }
    case .failure(let problem):
      sessions[session.id]?.problem = "cannot lock: \(problem.text)"
      Log.error("session \(session.id): refusing to lock: \(problem.text)")
      return false
    }
  }

  /// Starts `command` for `session` (a restart runs the command it ran before).
  @discardableResult
  func startLocker(
    _ session: Logind.SessionInfo, command: [String], kind: Locker.Kind, environment: [String]? = nil
  ) -> Bool {
    do {
      let locker = try Locker(command: command, kind: kind, environment: environment, loop: loop) {
        [self, command] in
        sessions[session.id]?.problem = nil
        // Ready while a sleep begins, after PrepareForSleep's SIGUSR1 went
        // to the others: its grace ends now too.
        if handshake.preparing && command.contains(Self.graceOption), let pid = sessions[session.id]?.lock?.pid {
          _ = kill(pid, SIGUSR1)
        }
        sleepEvent(.lockPresented(session.id))
      }
      sessions[session.id]?.lock = .running(locker)
      records?.add(session.id, locker: locker.pid)
      for other in sessions.values where other.lock?.coveringSession == session.id { records?.add(other.id, locker: locker.pid) }
      sleepEvent(.lockStarted(session.id))
      return true
    } catch {
      sessions[session.id]?.problem = "cannot start the lock screen: \(error)"
      Log.error("session \(session.id): cannot start \(command[0]): \(error)")
      return false
    }
  }

  /// Ends what `cover`'s console lock covered: those sessions are no longer locked.
  func uncover(by cover: String) -> [Logind.SessionInfo] {
    var freed: [Logind.SessionInfo] = []
    for other in sessions.values where other.lock?.coveringSession == cover {
      sessions[other.id]?.lock = nil
      records?.remove(other.id)
      freed.append(other.info)
    }
    return freed
  }

  func unlocked(_ session: Logind.SessionInfo) {
    Log.info("session \(session.id): unlocked")
    records?.remove(session.id)
    sessions[session.id]?.lockEnded()
    logind.setLockedHint(session, false)
    for other in uncover(by: session.id) {
      Log.info("session \(other.id): unlocked with session \(session.id)")
      logind.setLockedHint(other, false)
      followIdleHint(other)
    }
    updateIdleTimers()
    followIdleHint(session)
  }

  /// A locker ended. Exit 0 is the only unlock; anything else (a crash, a
  /// kill) starts a new one at once, with a backoff if it keeps dying.
  func lockerExited(pid: pid_t, status: Int32) {
    guard
      let (session, locker) = sessions.values.lazy.compactMap({ tracked in tracked.lock?.locker.map { (tracked.info, $0) } })
        .first(where: { $0.1.pid == pid })
    else { return }
    let id = session.id
    locker.forget()
    sessions[id]?.lock = nil
    if status == 0 {
      unlocked(session)
      // Given back while a sleep begins (a key in a grace as the lid
      // closed, the passcode a moment too late): locked again for the
      // sleep, which waits for it.
      if handshake.preparing { lock(session, reason: "sleep") }
      return
    }
    if status == ConsoleHolder.Exit.sharedSeat.rawValue, locker.isConsoleHolder {
      // Another user has a session on the seat: the holder would shut them
      // out. Lock this session, and those the lock was to cover, each on its
      // own terminal instead, at once.
      let others = uncover(by: id)
      Log.warning("session \(id): another user has a session on this seat; locking each session's own terminal instead of the console")
      for each in [session] + others { lock(each, reason: "shared seat", seatShared: true) }
      return
    }
    if locker.kind == .wayland, let refusal = WaylandLockExit(rawValue: status) {
      // The compositor offers no ext-session-lock-v1, another lock screen
      // holds its lock, or it is gone (a console login's shell may be on
      // screen now): lock as without a compositor, at once, and say so. Not
      // in-session again until this lock ends (a VT lock the shared-seat
      // rule turns down must not come back here).
      Log.warning("session \(id): the in-session lock ended without an unlock (\(refusal.reason)); locking without it")
      sessions[id]?.inSessionRefused = true
      lock(session, reason: "in-session lock refused")
      if isLocked(id) { sessions[id]?.note = "in-session lock refused: \(refusal.reason)" }
      return
    }
    if status == ConsoleHolder.Exit.stuck.rawValue, locker.isConsoleHolder {
      // passlock-vt could not take the console: the display server on that
      // VT does not let go of it. Nothing is locked; say so loudly, let a
      // pending sleep go on (logind would stop waiting anyway), and retry.
      let problem = "cannot lock: the display server on VT \(session.vtNumber) does not let go of the console"
      sessions[id]?.problem = problem
      Log.error("session \(id): \(problem); retrying")
    }
    sleepEvent(.lockFailed(id))
    if !locker.isReady && refusedBeforeLocking(status, locker) {
      // It said nothing could unlock (no passcode, a gatekeeper that cannot
      // work here) before it locked anything. Only the gatekeeper's own
      // answer to us ends the lock; no answer keeps it (StatusReading).
      refreshPasscode()
      guard handshake.locks else { return notLocked(session) }
    }
    var backoff = sessions[id]?.restarts ?? RestartBackoff()
    let delay = backoff.failed(afterRunning: Double(monotonicNanoseconds() - locker.startedAt) / 1e9)
    sessions[id]?.restarts = backoff
    if backoff.keepsFailing {
      sessions[id]?.note =
        "the lock screen keeps failing (\(backoff.quickFailures) times in a row, last exit status \(status)); restarted with a growing delay"
    }
    Log.warning("session \(id): the lock screen exited with \(status); starting it again in \(delay) ms")
    let restart = { [self] in
      // Never with the grace the first one had: killing a lock screen
      // must not open the session to the next key.
      if let session = sessions[id], !session.isLocked {
        startLocker(session.info, command: Self.withoutGrace(locker.command), kind: locker.kind, environment: locker.environment)
      }
    }
    if delay == 0 {
      restart()
    } else {
      loop.after(milliseconds: Int64(delay), restart)
    }
  }

  /// The statuses with which a locker says it locked nothing because
  /// nothing could unlock: the lock screen's "no passcode" (2) and
  /// "gatekeeper" (70), the console holder's refusal (1).
  func refusedBeforeLocking(_ status: Int32, _ locker: Locker) -> Bool {
    if locker.isConsoleHolder { return status == ConsoleHolder.Exit.refused.rawValue }
    return status == CommandFailure.noPasscode.exitStatus || status == CommandFailure.gatekeeper("").exitStatus
  }

  /// A lock that never stood, and never will while no passcode is set: the
  /// session is not locked.
  func notLocked(_ session: Logind.SessionInfo) {
    Log.info("session \(session.id): not locked: the gatekeeper says nothing could unlock it (\(passcodeWords))")
    records?.remove(session.id)
    sessions[session.id]?.restarts = RestartBackoff()
    sessions[session.id]?.note = nil
    logind.setLockedHint(session, false)
    for other in uncover(by: session.id) { logind.setLockedHint(other, false) }
    updateIdleTimers()
  }

  /// Watches a locker we did not start (it survived a daemon restart). Not
  /// our child, so no exit status: its end is noticed by polling once a
  /// second, and only while one exists. A clean unlock removes the console
  /// holder's state file, or the lock screen's record (`--record`).
  func adopt(_ survivor: LockRecords.Survivor, _ session: Logind.SessionInfo) {
    let pid = survivor.pid
    let what = survivor.isConsoleHolder ? "console holder" : "lock screen"
    let proof = survivor.isConsoleHolder ? ConsoleHolder.statePath : records?.path(session.id) ?? ""
    Log.info("session \(session.id): the \(what) \(pid) survived a restart; keeping it")
    sessions[session.id]?.lock = .adopted(pid: pid, consoleHolder: survivor.isConsoleHolder)
    logind.setLockedHint(session, true)
    stopIdleTimers(session.id)
    var timer: EventLoop.Token?
    timer = loop.after(milliseconds: 1000, repeating: 1000) { [self] in
      // EPERM: the pid now belongs to someone else's process, so ours is gone.
      guard kill(pid, 0) == -1 && (errno == ESRCH || errno == EPERM) else { return }
      loop.cancel(timer)
      sessions[session.id]?.lock = nil
      if access(proof, F_OK) == 0 {
        Log.warning("session \(session.id): the adopted \(what) died; locking again")
        lock(session, reason: "holder died")
      } else {
        unlocked(session)
      }
    }
  }
}
