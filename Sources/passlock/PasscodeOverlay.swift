import Glibc
import PasslockClient
import PasslockCore
import PasslockPOSIX

/// The passcode screen on a terminal: reads keys, drives `LockScreen`, asks
/// the gatekeeper without blocking the drawing, and redraws only what changed.
/// One class serves the lock screen and the set/change/remove keypad flows.
final class PasscodeOverlay {
  enum Outcome {
    case finished
    /// The terminal went away (SIGHUP, end of input): nothing was unlocked.
    case hangup
    /// The gatekeeper's status refused the lock screen drawn from the cache (`failure`).
    case refused
  }

  let terminal: LockTerminal
  let renderer: LockRenderer
  let gatekeeper: GatekeeperClient
  let allowSimple: Bool
  var screen: LockScreen
  var context: LockRenderer.Context
  var readyFD: FileDescriptor?

  /// What is being typed, and the entries accepted so far (current, new).
  var entry = Secret()
  var first = Secret()
  var second = Secret()

  private var parser = InputParser()
  private var previous: ScreenGrid?
  private var layout = LockRenderer.Layout(kind: .minimal, keys: [])
  private var pending: PendingRequest?
  /// The account password's PAM transaction, run by the gatekeeper.
  private var passwordRequest: PendingRequest?
  /// PAM has asked for the password and waits for our answer.
  private var promptWaiting = false
  private var lastInputAt: Int64 = 0

  /// The external authenticator's settings, when configured.
  let external: ExternalSettings?
  /// Its PAM transaction in the gatekeeper, running beside passcode entry.
  private var externalRequest: PendingRequest?
  /// When it starts by itself (monotonic ms), once offered with AutoStart.
  private var externalStartAt: Int64?

  /// The gatekeeper's status, still to come, for a screen drawn from
  /// StatusCache: no key is read until it replaces the cached one.
  private var unconfirmed: PendingRequest?
  /// Checks that answer; set while the status on screen is the cached one.
  private var confirm: ((Result<AuthResult, ClientError>) throws(CommandFailure) -> StoreStatus)?
  /// Why that status ended the lock screen (no passcode, a refused store).
  private(set) var failure: CommandFailure?
  /// False on a VT of its own (`--own-vt`): no session's job can be reading it.
  var stopsForegroundJob = true
  /// The session leader on the terminal (`--leader`): its job is found at
  /// once, so it is stopped before the first frame is drawn.
  var foregroundLeader: pid_t?

  init(
    terminal: LockTerminal, renderer: LockRenderer, gatekeeper: GatekeeperClient, screen: LockScreen,
    context: LockRenderer.Context, allowSimple: Bool = false, readyFD: FileDescriptor? = nil,
    external: ExternalSettings? = nil
  ) {
    self.external = external
    self.terminal = terminal
    self.renderer = renderer
    self.gatekeeper = gatekeeper
    self.screen = screen
    self.context = context
    self.allowSimple = allowSimple
    self.readyFD = readyFD
  }

  static func now() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }

  func run() throws(LockTerminalError) -> Outcome {
    try terminal.begin()
    defer {
      passwordRequest?.cancel()
      // The loser of a race is stopped before it can count anything.
      externalRequest?.cancel()
      // A passcode check already counted its attempt: let it finish and be reaped.
      pending?.abandon()
      unconfirmed?.abandon()
      terminal.restore()
      if screen.finished { terminal.releaseSession() }
    }
    // Known at once through the leader: stopped before anything is drawn
    // (a leader not on this terminal leaves it to the scan after the frame).
    if stopsForegroundJob, let foregroundLeader { terminal.freezeForegroundJob(leader: foregroundLeader, scanning: false) }
    apply(screen.start())
    draw()
    if let readyFD {
      // The first full frame is on the terminal: tell the waiting parent (one byte).
      try? readyFD.writeAll([1])
      readyFD.close()
      self.readyFD = nil
    }
    // Someone else's terminal: its job is stopped before any key is read
    // (the /proc scan that finds it stays off the way to the first frame).
    if stopsForegroundJob { terminal.freezeForegroundJob() }
    if confirm != nil {
      // Asked only now, so that it does not compete with the first frame.
      do { unconfirmed = try gatekeeper.start(.status) } catch { if !settle(.failure(error)) { return .refused } }
    }
    var buffer = [UInt8](repeating: 0, count: 512)
    while !screen.finished {
      // Keys wait in the terminal until the screen shows the gatekeeper's status.
      let reading = unconfirmed == nil
      var fds = [
        pollfd(fd: terminal.fd.rawValue, events: reading ? Int16(POLLIN) : 0, revents: 0),
        pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      let pendingIndex = fds.count
      if let pending { fds.append(pollfd(fd: pending.output.rawValue, events: Int16(POLLIN), revents: 0)) }
      let passwordIndex = fds.count
      if let passwordRequest { fds.append(pollfd(fd: passwordRequest.output.rawValue, events: Int16(POLLIN), revents: 0)) }
      let externalIndex = fds.count
      if let externalRequest { fds.append(pollfd(fd: externalRequest.output.rawValue, events: Int16(POLLIN), revents: 0)) }
      let statusIndex = fds.count
      if let unconfirmed { fds.append(pollfd(fd: unconfirmed.output.rawValue, events: Int16(POLLIN), revents: 0)) }
      let ready = poll(&fds, nfds_t(fds.count), timeout())
      if ready < 0 && errno != EINTR { return .hangup }
      let now = Self.now()

      if fds[1].revents & Int16(POLLIN) != 0 {
        for signal in SignalPipe.drain() {
          if signal == SIGHUP { return .hangup }
          if signal == SIGWINCH { previous = nil }
          // passlockd after resume: draw it all again (the clock has moved, a
          // console may have come back blank). What was typed is kept: logind
          // announces the resume only after the sleep hooks ran, by when the
          // screen has been back for a while and the person may be typing.
          if signal == SIGUSR1 { previous = nil }
        }
      }
      // Not reading yet, the terminal can still hang up.
      if !reading, fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return .hangup }
      // POLLNVAL too: a terminal descriptor that is gone must end the screen, not spin.
      if reading, fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR | POLLNVAL) != 0 {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(terminal.fd.rawValue, $0.baseAddress, $0.count) }
        if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { return .hangup }
        if n > 0 {
          lastInputAt = now
          for byte in buffer[..<n] {
            if let key = parser.feed(byte) { handle(key, now: now) }
          }
        }
      }
      if statusIndex < fds.count, fds[statusIndex].revents != 0, !statusArrived() { return .refused }
      if pendingIndex < fds.count, fds[pendingIndex].revents != 0, let request = pending {
        pending = nil
        apply(screen.verdict(verdict(request), now: Self.now()))
      }
      if passwordIndex < fds.count, fds[passwordIndex].revents != 0 { passwordFrameArrived() }
      if externalIndex < fds.count, fds[externalIndex].revents != 0 { externalFrameArrived() }
      if let at = externalStartAt, now >= at {
        externalStartAt = nil
        startExternal()
      }
      // A lone Esc: after a quiet moment it was just the Esc key.
      if parser.isPending && now - lastInputAt >= 50, let key = parser.timeOut() { handle(key, now: now) }
      draw()
    }
    return .finished
  }

  /// Milliseconds until something on screen changes by itself.
  private func timeout() -> Int32 {
    let now = Self.now()
    var wait: Int64 = 60_000 - (Int64(wallClockSeconds()) % 60) * 1000  // the clock's next minute
    if screen.visibleDigit(now: now) != nil { wait = min(wait, screen.revealUntil - now) }
    if screen.isShaking(now: now) { wait = min(wait, 50) }
    if screen.secondsUntilRetry(now: now) > 0 { wait = min(wait, 1000 - (screen.retryAt.map { $0 - now } ?? 0) % 1000) }
    if parser.isPending { wait = min(wait, 50) }
    if let at = externalStartAt { wait = min(wait, at - now) }
    return Int32(max(1, min(wait, 60_000)))
  }

  private func handle(_ key: InputParser.Key, now: Int64) {
    var key = key
    if case .click(let column, let row) = key {
      switch layout.key(atColumn: column, row: row) {
      case .some(.digit(let d)): key = .digit(d)
      case .some(.delete): key = .delete
      case .some(.external):
        startExternal()
        return
      case .none: return
      }
    }
    // Space starts the external authenticator too, outside the password field.
    if key == .text(0x20) && !screen.passwordMode && context.externalKey != nil {
      startExternal()
      return
    }
    apply(screen.key(key, now: now))
  }

  private func apply(_ effects: [LockScreen.Effect]) {
    for effect in effects {
      switch effect {
      case .append(let byte): entry.append(byte)
      case .deleteLast: entry.removeLast()
      case .clearEntry: entry.clear()
      case .bell: terminal.write("\u{7}")
      case .finish: break
      case .submit(let step): submit(step)
      case .startAccountPassword: startAccountPassword()
      case .cancelAccountPassword:
        passwordRequest?.cancel()
        passwordRequest = nil
        promptWaiting = false
        context.pamMessage = nil
      case .submitAccountPassword:
        if promptWaiting { answerPrompt() }  // otherwise answered when the prompt arrives
      }
    }
  }

  // MARK: A first frame from the cache

  /// Draws from a cached status: once the first frame is up the gatekeeper
  /// is asked, and `confirm` checks its answer.
  func awaitStatus(confirm: @escaping (Result<AuthResult, ClientError>) throws(CommandFailure) -> StoreStatus) {
    self.confirm = confirm
  }

  private func statusArrived() -> Bool {
    guard let request = unconfirmed else { return true }
    unconfirmed = nil
    let answer: Result<AuthResult, ClientError>
    do { answer = .success(try request.finish { _, _, _ in false }) } catch { answer = .failure(error) }
    return settle(answer)
  }

  /// The gatekeeper's status replaces the cached one (nothing was typed
  /// yet); false when it refuses the lock screen.
  private func settle(_ answer: Result<AuthResult, ClientError>) -> Bool {
    guard let confirm else { return true }
    self.confirm = nil
    let status: StoreStatus
    do { status = try confirm(answer) } catch {
      failure = error
      return false
    }
    let now = Self.now()
    screen = LockScreen(unlocking: status, revealLastDigit: screen.revealLastDigit, now: now)
    context.userAtHost = userAtHost(status.user)
    if status.externalRefusal.isEmpty {
      offerExternal()
    } else {
      context.externalKey = nil
      externalStartAt = nil
    }
    apply(screen.start())
    return true
  }

  // MARK: External authenticator

  /// Shows its key and, with AutoStart, arms it after the delay (the owner is
  /// still in front of the screen as it locks). While a screen drawn from
  /// the cache awaits the gatekeeper's confirmation it only shows it; the
  /// confirmation arms it.
  func offerExternal() {
    guard let external, screen.flow == .unlock, !screen.lockedOut else { return }
    context.externalKey = external.label
    if confirm == nil && external.autoStart && externalStartAt == nil && externalRequest == nil {
      externalStartAt = Self.now() + external.armDelayMilliseconds
    }
  }

  private func startExternal() {
    guard externalRequest == nil, context.externalKey != nil, !screen.finished else { return }
    externalStartAt = nil
    do { externalRequest = try gatekeeper.start(.external, terminal: terminal.fd.rawValue) } catch {
      context.pamMessage = error.description
    }
  }

  private func externalFrameArrived() {
    guard let request = externalRequest else { return }
    do {
      switch try request.nextFrame() {
      case .message(_, let text), .prompt(_, let text):
        context.pamMessage = text  // "Place your finger on the reader"
      case .result(let result):
        externalRequest = nil
        request.abandon()
        switch result.code {
        case .ok:
          // The first success wins; a passcode check in flight finishes on exit.
          context.pamMessage = nil
          apply(screen.verdict(.accepted(next: nil, length: nil), now: Self.now()))
        case .externalFailed:
          context.pamMessage = renderer.texts.externalNotRecognized
        case .externalUnavailable, .externalDisabled, .noPasscode:
          context.externalKey = nil  // not available here: the key goes
          context.pamMessage = result.message
        case .storeBusy:
          context.pamMessage = renderer.texts.storeBusy
        default:
          context.pamMessage = result.message
        }
      }
    } catch {
      externalRequest = nil
      request.cancel()
      context.externalKey = nil
    }
  }

  // MARK: Account password

  /// The gatekeeper runs the `passlock` PAM service; its prompts and messages
  /// come back over the pipe while the screen keeps drawing.
  private func startAccountPassword() {
    passwordRequest?.cancel()
    promptWaiting = false
    do {
      passwordRequest = try gatekeeper.start(.accountPassword, terminal: terminal.fd.rawValue)
    } catch {
      passwordRequest = nil
      context.pamMessage = error.description
    }
  }

  private func passwordFrameArrived() {
    guard let request = passwordRequest else { return }
    do {
      switch try request.nextFrame() {
      case .prompt(let style, let text) where style == .secret || style == .visible:
        screen.passwordPrompt = text
        promptWaiting = true
        if screen.busy {
          if entry.isEmpty { screen.awaitNextPassword() } else { answerPrompt() }
        }
      case .message(_, let text), .prompt(_, let text):
        // PAM's info and error messages ("Password expired", faillock's count).
        context.pamMessage = text
      case .result(let result):
        passwordRequest = nil
        request.abandon()
        if result.code == .ok {
          apply(screen.verdict(.accepted(next: nil, length: nil), now: Self.now()))
        } else {
          apply(screen.verdict(.passwordRejected(result.message ?? ""), now: Self.now()))
        }
      }
    } catch {
      passwordRequest = nil
      request.cancel()
      apply(screen.verdict(.passwordRejected(error.description), now: Self.now()))
    }
  }

  private func answerPrompt() {
    guard let request = passwordRequest else { return }
    promptWaiting = false
    do { try request.answer(entry) } catch { context.pamMessage = error.description }
    entry.clear()
  }

  // MARK: Submitting

  private func submit(_ step: LockScreen.Step) {
    let now = Self.now()
    switch (screen.flow, step) {
    case (_, .current):
      // The gatekeeper hashes for ~100 ms: ask without blocking the screen.
      do {
        pending = try gatekeeper.start(.verify) { (channel) throws(SystemError) in
          try channel.send(.secret, secret: entry)
        }
      } catch {
        apply(screen.verdict(.refused(error.description), now: now))
      }
    case (_, .new):
      let violation = entry.withBytes { PasscodePolicy.check($0, allowSimple: allowSimple) }
      if let violation {
        apply(screen.verdict(.refused(refusal(violation)), now: now))
      } else {
        second.replace(with: entry)
        apply(screen.verdict(.accepted(next: .confirm, length: entry.count), now: now))
      }
    case (_, .confirm):
      let same = second.withBytes { entry.constantTimeEquals($0) }
      if !same { second.clear() }
      apply(screen.verdict(same ? .accepted(next: nil, length: nil) : .mismatch, now: now))
    }
  }

  private func refusal(_ violation: PasscodePolicy.Violation) -> String {
    let text = String(describing: violation)
    return text.prefix(1).uppercased() + text.dropFirst()
  }

  /// Turns the gatekeeper's answer to a verify into the screen's verdict.
  private func verdict(_ request: PendingRequest) -> LockScreen.Verdict {
    let result: AuthResult
    do { result = try request.finish { _, _, _ in false } } catch { return .refused(error.description) }
    switch VerifyOutcome(result) {
    case .accepted:
      first.replace(with: entry)
      switch screen.flow {
      case .change: return .accepted(next: .new, length: nil)
      case .unlock, .create, .remove: return .accepted(next: nil, length: nil)
      }
    case .wrong(let failures, let retry, let required):
      return .wrong(failures: failures, retryAfterSeconds: retry, lockedOut: required)
    case .delayed(let retry): return .wait(seconds: retry, failures: screen.failedAttempts)
    case .accountPasswordRequired: return .lockedOut(failures: max(screen.failedAttempts, AttemptPolicy.lockoutFailures))
    case .failed(.storeBusy, _): return .busy
    case .failed(let code, let message): return .refused(message ?? "passlock-auth failed (\(code))")
    }
  }

  // MARK: Drawing

  private func draw() {
    let (width, height) = terminal.size()
    context.clock = wallClockText()
    let (grid, layout) = renderer.render(screen, context, now: Self.now(), width: width, height: height)
    self.layout = layout
    let bytes = grid.render(over: previous, color: renderer.capabilities.color)
    if !bytes.isEmpty { terminal.write(bytes) }
    previous = grid
  }
}
