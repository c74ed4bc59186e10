import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockLockController
  import PasslockPOSIX
#endif

/// The passcode screen on a terminal: reads keys and mouse reports, hands
/// them to the shared `LockController` (LockScreen, the gatekeeper's
/// requests), and redraws only what changed. One class serves the lock screen
/// and the set/change/remove keypad flows.
final class TerminalLockScreen {
  enum Outcome {
    case finished
    /// The terminal went away (SIGHUP, end of input): nothing was unlocked.
    case hangup
  }

  let terminal: LockTerminal
  let renderer: LockRenderer
  let controller: LockController
  var readyFD: FileDescriptor?

  private var parser = InputParser()
  private var previous: ScreenGrid?
  private var layout = LockRenderer.Layout(kind: .minimal, keys: [])
  private var lastInputAt: Int64 = 0
  /// The terminal can say whether Caps Lock is on (a VT).
  private lazy var watchesCapsLock = terminal.capsLock() != nil

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
    self.terminal = terminal
    self.renderer = renderer
    self.readyFD = readyFD
    controller = LockController(
      gatekeeper: gatekeeper, screen: screen, context: context, texts: renderer.texts, terminal: terminal.fd.rawValue,
      allowSimple: allowSimple, external: external)
    controller.bell = { [terminal] in terminal.write("\u{7}") }
  }

  var screen: LockScreen { controller.screen }

  func run() throws(LockTerminalError) -> Outcome {
    try terminal.begin()
    defer {
      controller.end()
      terminal.restore()
      if screen.finished { terminal.releaseSession() }
    }
    // Known at once through the leader: stopped before anything is drawn
    // (a leader not on this terminal leaves it to the scan after the frame).
    if stopsForegroundJob, let foregroundLeader { terminal.freezeForegroundJob(leader: foregroundLeader, scanning: false) }
    controller.start()
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
    controller.askForStatus()
    var buffer = [UInt8](repeating: 0, count: 512)
    while !screen.finished {
      // Keys wait in the terminal until the screen shows the gatekeeper's status.
      let reading = !controller.awaitsStatus
      var fds = [
        pollfd(fd: terminal.fd.rawValue, events: reading ? Int16(POLLIN) : 0, revents: 0),
        pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      let watched = controller.watched
      fds += watched.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
      let ready = poll(&fds, nfds_t(fds.count), timeout())
      if ready < 0 && errno != EINTR { return .hangup }
      let now = LockController.now()

      if fds[1].revents & Int16(POLLIN) != 0 {
        for signal in SignalPipe.drain() {
          if signal == SIGHUP { return .hangup }
          if signal == SIGWINCH { previous = nil }
          // passlockd after resume: draw it all again (the clock has moved, a
          // console may have come back blank). What was typed is kept: logind
          // announces the resume only after the sleep hooks ran, by when the
          // screen has been back for a while and the person may be typing.
          // It also ends a grace: passlockd sends it as a sleep begins too.
          if signal == SIGUSR1 {
            previous = nil
            controller.endGrace()
          }
        }
      }
      // Not reading yet, the terminal can still hang up.
      if !reading, fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return .hangup }
      // POLLNVAL too: a terminal descriptor that is gone must end the screen, not spin.
      if reading, fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR | POLLNVAL) != 0 {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(terminal.fd.rawValue, $0.baseAddress, $0.count) }
        if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { return .hangup }
        // Within an idle lock's grace any byte gives the session back (an
        // arrow key's sequence too): what was typed is not read as keys.
        if n > 0 && controller.releaseInGrace(now: now) {
          lastInputAt = now
        } else if n > 0 {
          lastInputAt = now
          for byte in buffer[..<n] {
            if let key = parser.feed(byte) { handle(key, now: now) }
          }
        }
      }
      let answered = zip(watched, fds[2...]).filter { $0.1.revents != 0 }.map { $0.0.request }
      controller.answered(answered)
      controller.tick(now: now)
      // A lone Esc: after a quiet moment it was just the Esc key.
      if parser.isPending && now - lastInputAt >= 50, let key = parser.timeOut() { handle(key, now: now) }
      draw()
    }
    return .finished
  }

  /// Milliseconds until something on screen changes by itself. Caps Lock
  /// pressed on a VT sends no byte: while the password field is open there
  /// it is looked at twice a second.
  private func timeout() -> Int32 {
    var wait = controller.timeout(now: LockController.now())
    if parser.isPending { wait = min(wait, 50) }
    if screen.passwordMode && watchesCapsLock { wait = min(wait, 500) }
    return Int32(max(1, min(wait, 60_000)))
  }

  private func handle(_ key: InputParser.Key, now: Int64) {
    if case .click(let column, let row) = key {
      if let key = layout.key(atColumn: column, row: row) { controller.press(keypad: key, now: now) }
      return
    }
    controller.press(key, now: now)
  }

  // MARK: Drawing

  private func draw() {
    let (width, height) = terminal.size()
    controller.context.clock = wallClockText()
    controller.context.capsLock = screen.passwordMode && watchesCapsLock && terminal.capsLock() == true
    let (grid, layout) = renderer.render(screen, controller.context, now: LockController.now(), width: width, height: height)
    self.layout = layout
    let bytes = grid.render(over: previous, color: renderer.capabilities.color)
    if !bytes.isEmpty { terminal.write(bytes) }
    previous = grid
  }
}
