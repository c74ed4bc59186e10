import CLinux
import CSessionLock
import CWaylandClient
import Glibc

/// The Wayland session's lock (ext-session-lock-v1): asks the compositor to
/// lock, gives every output a lock surface (outputs added while locked too),
/// draws the passcode screen on each, feeds keys, clicks and taps to the
/// shared `LockController`, and unlocks (`unlock_and_destroy`) only after the
/// controller finished: an accepted verdict, and only a lock the compositor
/// confirmed (`locked`). Nothing else gives the session back: no answer from
/// the gatekeeper, a frame that cannot be drawn, a compositor's nonsense. If
/// this program dies, the compositor keeps the session locked.
final class WaylandLock {
  /// How a lock ended without an unlock.
  enum Failure: Error {
    /// The compositor will not lock for us (see `CommandFailure`).
    case refused(CommandFailure)
    /// The connection to the compositor broke: nothing was unlocked.
    case connectionLost
  }

  let display: OpaquePointer
  private var registry: OpaquePointer?
  private var compositor: OpaquePointer?
  private var shm: OpaquePointer?
  private var manager: OpaquePointer?
  private var sessionLock: OpaquePointer?
  private var outputs: [OutputSurface] = []
  private var seats: [Seat] = []
  /// The lock's life (SessionLockLife): when it is on screen, when it ends.
  private var life = SessionLockLife()
  /// How the lock ended, once it has.
  private var ending: SessionLockLife.Ending?
  var locked: Bool { life.phase == .locked }

  private var controller: LockController?
  private let renderer: LockRenderer
  /// cairo, loaded before the lock is asked for (DrawingLibrary).
  private let lib: DrawingLibrary
  /// Made with cairo once the first frame is drawn (fontconfig's set-up).
  private var painter: Painter?
  private var readyFD: FileDescriptor?
  /// After `locked`, until every output has shown a frame of ours (or this
  /// time, in ms, has come): the ready byte waits (reportReadyOnceShown).
  private var readyDeadline: Int64?
  /// How long the ready byte waits for the frames after `locked`: an output
  /// that is off (DPMS) draws no frame until it is on again.
  static let shownWaitMilliseconds: Int64 = 1000
  /// Keys and clicks that came before the gatekeeper's status replaced the
  /// one on screen: they wait, as on the terminal, and count once it is in.
  /// (A few: a status that does not come must not make them pile up.)
  private var waiting: [(key: InputParser.Key?, keypad: LockRenderer.KeypadKey?)] = []
  private static let waitingLimit = 64

  init(display: OpaquePointer, renderer: LockRenderer, lib: DrawingLibrary, readyFD: FileDescriptor?) {
    self.display = display
    self.renderer = renderer
    self.lib = lib
    self.readyFD = readyFD
  }

  deinit {
    outputs.removeAll()
    seats.removeAll()
    if let manager { ext_session_lock_manager_v1_destroy(manager) }
    if let shm { wl_shm_destroy(shm) }
    if let compositor { wl_compositor_destroy(compositor) }
    if let registry { wl_registry_destroy(registry) }
  }

  var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

  // MARK: Connecting

  /// Binds the globals. The compositor must offer ext_session_lock_manager_v1
  /// (`CommandFailure.noSessionLock`, status 69, otherwise: passlockd then
  /// locks on a console instead).
  func connect(displayName: String) throws(Failure) {
    registry = wl_display_get_registry(display)
    wl_registry_add_listener(registry, LockListeners.registry, opaque)
    guard wl_display_roundtrip(display) >= 0 else { throw .connectionLost }
    guard manager != nil else {
      throw .refused(
        .noSessionLock(
          "the compositor at \(displayName) does not offer ext-session-lock-v1, so passlock cannot lock this Wayland session itself; passlockd locks it on a console instead"
        ))
    }
    guard compositor != nil, shm != nil else {
      throw .refused(.noSessionLock("the compositor at \(displayName) offers no wl_compositor or wl_shm to draw a lock screen with"))
    }
  }

  /// wl_registry.global.
  func global(name: UInt32, interface: String, version: UInt32) {
    switch interface {
    case "wl_compositor":
      compositor = OpaquePointer(wl_registry_bind(registry, name, passlock_wl_compositor_interface(), min(version, 4)))
    case "wl_shm":
      shm = OpaquePointer(wl_registry_bind(registry, name, passlock_wl_shm_interface(), 1))
    case "wl_seat":
      guard let proxy = wl_registry_bind(registry, name, passlock_wl_seat_interface(), min(version, 5)) else { return }
      let seat = Seat(seat: OpaquePointer(proxy), name: name, lock: self)
      seats.append(seat)
      wl_seat_add_listener(seat.seat, SeatListeners.seat, seat.opaque)
    case "wl_output":
      // Version 3 at least: wl_output_release.
      guard version >= 3, let proxy = wl_registry_bind(registry, name, passlock_wl_output_interface(), min(version, 4)) else {
        return
      }
      let output = OutputSurface(output: OpaquePointer(proxy), name: name, lock: self)
      outputs.append(output)
      wl_output_add_listener(output.output, LockListeners.output, output.opaque)
    case "ext_session_lock_manager_v1":
      manager = OpaquePointer(wl_registry_bind(registry, name, passlock_ext_session_lock_manager_v1_interface(), 1))
    default:
      break
    }
  }

  /// wl_registry.global_remove: an output unplugged (its surface goes with
  /// it), a seat gone.
  func globalRemoved(name: UInt32) {
    outputs.removeAll { $0.name == name }
    seats.removeAll { $0.name == name }
    reportReadyOnceShown()  // the output whose frame it waited for may be gone
  }

  /// An output's first `done`: its scale is known. Under the lock (an output
  /// added while locked too) it gets its lock surface now.
  func outputDescribed(_ output: OutputSurface) {
    guard let sessionLock, let compositor, life.phase != .ended else { return }
    output.createLockSurface(lock: sessionLock, compositor: compositor)
  }

  // MARK: Locking

  /// Asks the compositor to lock and runs the lock screen until an
  /// accepted verdict (then `unlock_and_destroy`). Throws when the lock does
  /// not stand: refused before `locked`, or ended by the compositor (never
  /// by us); the session is then the compositor's to keep or give back.
  func lock(controller: LockController) throws(Failure) {
    self.controller = controller
    sessionLock = ext_session_lock_manager_v1_lock(manager)
    ext_session_lock_v1_add_listener(sessionLock, LockListeners.sessionLock, opaque)
    perform(life.handle(.lockAsked))
    for output in outputs where output.described { outputDescribed(output) }
    controller.start()
    while ending == nil {
      drawAll()
      do { try waitForEvents(controller) } catch { perform(life.handle(.connectionLost)) }
      if controller.screen.finished { perform(life.handle(.accepted)) }
      replayWaiting(controller)
    }
    switch ending {
    case .unlocked?:
      _ = wl_display_roundtrip(display)  // the unlock reaches the compositor before we go
    case .heldElsewhere?: throw .refused(.lockHeldElsewhere)
    case .endedByCompositor?: throw .refused(.refused("the compositor ended the lock; nothing of ours unlocked it"))
    case .compositorGone?, nil: throw .connectionLost
    }
  }

  /// Carries out what the lock's life says (also from inside the
  /// compositor's events: no round trip here).
  private func perform(_ effects: [SessionLockLife.Effect]) {
    for effect in effects {
      switch effect {
      case .reportReady:
        // `locked` can come before anything of ours is drawn (Wayfire, sway
        // and labwc before drawing our frame, Mir before we have a buffer):
        // the byte waits for the frames.
        if readyFD != nil { readyDeadline = LockController.now() + Self.shownWaitMilliseconds }
        reportReadyOnceShown()
      case .askForStatus:
        // Asked once the compositor has the lock, so the gatekeeper does
        // not compete with it; without an answer it is asked again, locked.
        controller?.askForStatus()
      case .unlockAndDestroy:
        ext_session_lock_v1_unlock_and_destroy(sessionLock)
        sessionLock = nil
      case .end(let how):
        ending = how
      }
    }
  }

  /// Tells the waiting parent (one byte) that the lock is on screen: the
  /// compositor has locked the session and shown a frame of ours on every
  /// output with a lock surface, or the wait for those frames is over. A
  /// suspend waits for this byte, and what the display holds as the machine
  /// sleeps is what it shows first at wake.
  func reportReadyOnceShown() {
    guard let readyFD, let readyDeadline else { return }
    let shown = outputs.allSatisfy { !$0.hasLockSurface || $0.shown }
    guard shown || LockController.now() >= readyDeadline else { return }
    try? readyFD.writeAll([1])
    readyFD.close()
    self.readyFD = nil
    self.readyDeadline = nil
  }

  func lockedEvent() { perform(life.handle(.locked)) }

  func finishedEvent() { perform(life.handle(.finished)) }

  // MARK: The loop

  /// One round: Wayland events, the gatekeeper's answers, signals, timers.
  private func waitForEvents(_ controller: LockController) throws(Failure) {
    while wl_display_prepare_read(display) != 0 {
      guard wl_display_dispatch_pending(display) >= 0 else { throw .connectionLost }
    }
    if wl_display_flush(display) < 0 && errno != EAGAIN {
      wl_display_cancel_read(display)
      throw .connectionLost
    }
    var fds = [
      pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0),
      pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
    ]
    let watched = controller.watched
    fds += watched.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    let now = LockController.now()
    let wait = min(controller.timeout(now: now), readyDeadline.map { $0 - now } ?? 60_000, 60_000)
    let ready = poll(&fds, nfds_t(fds.count), Int32(max(1, wait)))
    // SIGUSR1, from passlockd as a sleep begins (a grace ends: before any
    // key read in this same round is handled) and after resume (draw it all
    // again: the clock has moved).
    let heard = fds[1].revents & Int16(POLLIN) != 0 && SignalPipe.drain().contains(SIGUSR1)
    if heard { controller.endGrace() }
    if ready > 0 && fds[0].revents != 0 {
      guard wl_display_read_events(display) >= 0 else { throw .connectionLost }
    } else {
      wl_display_cancel_read(display)
    }
    guard wl_display_dispatch_pending(display) >= 0 else { throw .connectionLost }
    if heard { for output in outputs { output.redrawAll() } }
    let answered = zip(watched, fds[2...]).filter { $0.1.revents != 0 }.map { $0.0.request }
    controller.answered(answered)
    controller.tick(now: LockController.now())
    reportReadyOnceShown()
  }

  // MARK: Input

  var passwordField: Bool { controller?.screen.passwordMode ?? false }

  /// Input within an idle lock's grace, status or not: the session back.
  func releaseInGrace() -> Bool {
    guard let controller, locked else { return false }
    return controller.releaseInGrace(now: LockController.now())
  }

  func press(_ key: InputParser.Key) {
    guard let controller, locked else { return }
    if controller.awaitsStatus {
      if waiting.count < Self.waitingLimit { waiting.append((key, nil)) }
    } else {
      controller.press(key, now: LockController.now())
    }
  }

  /// A click or a tap at (`x`, `y`) on one of our surfaces.
  func click(on surface: OpaquePointer, x: Double, y: Double) {
    guard let controller, locked else { return }
    // Within an idle lock's grace a click anywhere gives the session back.
    if releaseInGrace() { return }
    guard let key = outputs.first(where: { $0.isSurface(surface) })?.layout?.key(atX: x, y: y) else { return }
    if controller.awaitsStatus {
      if waiting.count < Self.waitingLimit { waiting.append((nil, key)) }
    } else {
      controller.press(keypad: key, now: LockController.now())
    }
  }

  private func replayWaiting(_ controller: LockController) {
    guard !controller.awaitsStatus, !waiting.isEmpty else { return }
    let now = LockController.now()
    for (key, keypad) in waiting {
      if let key { controller.press(key, now: now) }
      if let keypad { controller.press(keypad: keypad, now: now) }
    }
    waiting.removeAll()
  }

  // MARK: Drawing

  private var capsLock: Bool { seats.contains { $0.keymap.capsLock } }
  private var layoutName: String? { seats.lazy.compactMap { $0.keymap.layoutName }.first }

  /// Everything a frame shows: a surface whose last frame showed another
  /// state is drawn again. The screen and its context as they are, and what
  /// the time changes on a screen that stays the same.
  struct FrameState: Equatable {
    var screen: LockScreen
    var context: LockRenderer.Context
    var visibleDigit: UInt8?
    var shakeOffset: Int?
    var secondsUntilRetry: Int64
    var capsLock: Bool
    var layoutName: String?
  }

  private func frameState(_ controller: LockController, now: Int64) -> FrameState {
    let screen = controller.screen
    return FrameState(
      screen: screen, context: controller.context, visibleDigit: screen.visibleDigit(now: now),
      shakeOffset: screen.isShaking(now: now) ? screen.shakeOffset(now: now) : nil,
      secondsUntilRetry: screen.secondsUntilRetry(now: now), capsLock: capsLock, layoutName: layoutName)
  }

  private func drawAll() {
    guard let controller, let shm else { return }
    let now = LockController.now()
    controller.context.clock = wallClockText()
    let state = frameState(controller, now: now)
    guard outputs.contains(where: { $0.needsFrame(state) }) else { return }
    let painter = self.painter ?? Painter(renderer: renderer, lib: lib)
    self.painter = painter
    for output in outputs {
      output.draw(
        state: state, shm: shm, lib: painter.lib,
        paint: { cairo, layout in
          painter.paint(
            cairo, layout: layout, screen: state.screen, context: state.context,
            keyboard: .init(capsLock: state.capsLock, layoutName: state.layoutName), now: now)
        },
        layoutFor: { width, height in
          SurfaceLayout(
            width: width, height: height, passwordField: state.screen.passwordMode,
            externalKey: state.context.externalKey != nil)
        })
    }
    // What a frame allocated and freed (fontconfig's setup at the first,
    // paths, cairo's scratch) would stay resident in the heap until reused;
    // the lock screen then waits, mostly for minutes.
    _ = passlock_malloc_trim()
  }
}
