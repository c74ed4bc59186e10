import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockLockController
  import PasslockPOSIX
#endif

/// `passlock lock` and the keypad flows: everything that puts the passcode
/// screen on a terminal.
extension Commands {
  func lock(
    tty: String?, readyFD: Int32?, record: String?, ownVT: Bool, leader: Int32?, graceMilliseconds: Int32? = nil
  ) throws(CommandFailure) -> Int32 {
    // Checked before anything is opened: a number that is not open would be
    // taken by the terminal, and the ready byte written to the screen. Kept
    // from the gatekeepers this lock screen starts (a lock screen that dies
    // must close it at once).
    if let readyFD, !setCloseOnExec(readyFD) {
      throw .refused("--ready-fd \(readyFD) is not an open descriptor; nothing was locked")
    }
    // The gatekeeper's status as it was last time (UnlockStatus): the first
    // frame need not wait for it. (On a console holder's VT too: the holder
    // asks the gatekeeper itself before it locks, so a stale cache cannot
    // lock a console nothing unlocks.)
    let unlock = try UnlockStatus.begin(gatekeeper: gatekeeper)
    // Beside the daemon's record: the terminal's settings from before the
    // lock, for a lock screen that replaces this one if it is killed.
    let prepared = try prepareLockScreen(tty: tty, settingsFile: record.map { $0 + ".termios" })
    // passlock-vt's VT: what was typed there was typed at the lock (at the
    // frame the holder painted), not into a session.
    prepared.terminal.keepsTypeahead = ownVT
    // Only the gatekeeper saying nothing could unlock keeps the terminal
    // from being locked (StatusReading), and not where the lock already
    // stands (the console holder's VT, a lock passlockd keeps): from the
    // first frame on, only an accepted verdict gives it back.
    let first = try unlock.first(alreadyLocked: ownVT || record != nil)
    var screen = LockScreen(reading: first, now: LockController.now())
    let lockScreen = prepared.lockScreen(
      screen: &screen, user: first.status?.user ?? environment("USER") ?? "", gatekeeper: gatekeeper,
      readyFD: readyFD.map { FileDescriptor(rawValue: $0) })
    if unlock.awaitsAnswer(after: first) { lockScreen.controller.awaitStatus(failures: first.isUnknown ? 1 : 0) }
    if let graceMilliseconds { lockScreen.controller.beginGrace(milliseconds: Int64(graceMilliseconds)) }
    lockScreen.stopsForegroundJob = !ownVT
    lockScreen.foregroundLeader = leader
    // Offered only when configured, its PAM service exists and the store
    // allows it now; from a cached status, armed only once confirmed.
    if let status = first.status, status.externalRefusal.isEmpty { lockScreen.controller.offerExternal() }
    let outcome: TerminalLockScreen.Outcome
    do { outcome = try lockScreen.run() } catch { throw .refused(error.description) }
    guard outcome == .finished else { return 129 }
    // A daemon that adopted this lock screen (it is not its child) reads
    // the unlock from the record's absence.
    if let record {
      unlink(record + ".termios")
      unlink(record)
    }
    return 0
  }

  /// `lock --check`: the gatekeeper answers and a passcode is set, so a lock
  /// screen started now could be unlocked (for scripts; the console holder
  /// asks the gatekeeper itself).
  func lockCheck() throws(CommandFailure) -> Int32 {
    let result: AuthResult
    do { result = try gatekeeper.run(.status) { _, _, _ in false } } catch { throw .gatekeeper(error.description) }
    guard try StoreStatus.answered(by: result).passcodeSet else { throw .noPasscode }
    return 0
  }

  /// Runs the passcode screen; `collect` reads the accepted entries afterwards.
  func showLockScreen(
    _ screen: inout LockScreen, user: String, tty: String? = nil, allowSimple: Bool = false,
    collect: (LockController) -> Void
  ) throws(CommandFailure) -> TerminalLockScreen.Outcome {
    let lockScreen = try prepareLockScreen(tty: tty).lockScreen(
      screen: &screen, user: user, gatekeeper: gatekeeper, allowSimple: allowSimple)
    let outcome: TerminalLockScreen.Outcome
    do { outcome = try lockScreen.run() } catch { throw .refused(error.description) }
    screen = lockScreen.screen
    collect(lockScreen.controller)
    return outcome
  }

  /// Configuration, terminal and signals: everything but the terminal's modes,
  /// which change only once there is something to lock.
  func prepareLockScreen(tty: String?, settingsFile: String? = nil) throws(CommandFailure) -> PreparedLockScreen {
    let config: Config
    do { config = try ConfigLoader.load() } catch {
      // A typo in the config must never keep a screen from locking: defaults, and say why.
      printError("Warning: \(error); using the default appearance\n")
      config = Config()
    }
    let terminal: LockTerminal
    do { terminal = try LockTerminal(path: tty, term: environment("TERM"), settingsFile: settingsFile) } catch {
      throw .refused(error.description)
    }
    SignalPipe.install(
      ignoring: [SIGINT, SIGQUIT, SIGTSTP, SIGTERM, SIGTTOU, SIGTTIN], watching: [SIGWINCH, SIGHUP, SIGUSR1])
    let appearance = LockAppearance(configuredBy: config)
    let renderer = appearance.renderer(linuxConsole: terminal.isLinuxConsole)
    let external = appearance.external
    return PreparedLockScreen(terminal: terminal, renderer: renderer, external: external)
  }

  /// set/change/remove on a terminal without --stdin use the keypad screen.
  var usesKeypad: Bool { input.isInteractive && FileDescriptor.standardInput.isTerminal }

  func setWithKeypad(_ status: StoreStatus, allowSimple: Bool) throws(CommandFailure) -> Int32 {
    var screen = LockScreen(flow: .create, length: nil, now: LockController.now())
    var new = Secret()
    let outcome = try showLockScreen(&screen, user: status.user, allowSimple: allowSimple) { new.replace(with: $0.second) }
    guard outcome == .finished else { throw .terminalGone }
    let result = try run(.set, flags: allowSimple ? .allowSimple : [], secrets: new)
    let code = try self.outcome(result, success: "Passcode set (\(new.count) digits).")
    try askAboutExternal()
    return code
  }

  /// As the original asked "Use Face ID?" after setting a passcode: when an
  /// external authenticator is configured and available, ask whether to use
  /// it, and keep the answer in the user's configuration (a drop-in that
  /// overrides `[External] Enabled=`).
  func askAboutExternal() throws(CommandFailure) {
    guard let config = try? ConfigLoader.load(), config.bool("External.Enabled"),
      (try? currentStatus())?.externalRefusal.isEmpty == true,
      let directory = ConfigLoader.userDirectory()
    else { return }
    let what =
      ["fingerprint": "your fingerprint", "face": "your face", "security-key": "your security key"][
        config["External.Kind"]] ?? "the external authenticator"
    guard let yes = input.askYesNo("Use \(what) to unlock? [Y/n] ") else { return }
    let dropIns = directory + "/passlock.conf.d"
    let text = "# Written by 'passlock set': your answer to \"Use \(what) to unlock?\"\n[External]\nEnabled=\(yes ? "yes" : "no")\n"
    do {
      try ConfigLoader.write(text, to: dropIns + "/90-external-choice.conf")
    } catch {
      throw .refused("could not save your choice: \(error)")
    }
    printOut(yes ? "The lock screen will offer \(what) beside the passcode.\n" : "Only the passcode will unlock the lock screen.\n")
  }

  func changeWithKeypad(_ status: StoreStatus, allowSimple: Bool) throws(CommandFailure) -> Int32 {
    var screen = LockScreen(
      flow: .change, length: status.length, failedAttempts: status.failedAttempts,
      retryAfterSeconds: status.retryAfterSeconds, now: LockController.now())
    var current = Secret()
    var new = Secret()
    let outcome = try showLockScreen(&screen, user: status.user, allowSimple: allowSimple) { entered in
      current.replace(with: entered.first)
      new.replace(with: entered.second)
    }
    guard outcome == .finished else { throw .terminalGone }
    let flags: AuthProtocol.Flags = allowSimple ? .allowSimple : []
    return try self.outcome(try run(.change, flags: flags, secrets: current, new), success: "Passcode changed (\(new.count) digits).")
  }

  func removeWithKeypad(_ status: StoreStatus) throws(CommandFailure) -> Int32 {
    var screen = LockScreen(
      flow: .remove, length: status.length, failedAttempts: status.failedAttempts,
      retryAfterSeconds: status.retryAfterSeconds, now: LockController.now())
    var current = Secret()
    let outcome = try showLockScreen(&screen, user: status.user) { current.replace(with: $0.first) }
    guard outcome == .finished else { throw .terminalGone }
    return try self.outcome(try run(.remove, secrets: current), success: "Passcode removed.")
  }
}

/// A terminal and renderer ready to show the passcode screen.
struct PreparedLockScreen {
  let terminal: LockTerminal
  let renderer: LockRenderer
  let external: ExternalSettings?

  func lockScreen(
    screen: inout LockScreen, user: String, gatekeeper: GatekeeperClient, allowSimple: Bool = false,
    readyFD: FileDescriptor? = nil
  ) -> TerminalLockScreen {
    screen.revealLastDigit = renderer.theme.revealLastDigit
    let context = LockRenderer.Context(clock: wallClockText(), userAtHost: userAtHost(user))
    return TerminalLockScreen(
      terminal: terminal, renderer: renderer, gatekeeper: gatekeeper, screen: screen, context: context,
      allowSimple: allowSimple, readyFD: readyFD, external: external)
  }
}
