#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
  import PasslockWaylandIdle
#endif

/// Idle from the compositor: a session whose Wayland compositor passlockd
/// finds (WaylandCompositors: one started by a display manager, from a
/// console login, or as a user service) is timed by the compositor's own
/// ext-idle-notify-v1, not by its terminal's access time (which keys typed
/// in a compositor do not move: a console-started compositor would
/// idle-lock while in use) nor by logind's IdleHint (which only an idle
/// daemon sets). The compositor counts every input it sees and honours its
/// idle inhibitors (a fullscreen video, sway's `inhibit_idle`); logind's
/// idle inhibitors still hold it off here. A session without a compositor,
/// or whose compositor cannot time it, is left to IdleWatcher as before,
/// until a new compositor socket appears.
enum CompositorIdle {
  /// Asked for on `display`; `watching` once the compositor took the
  /// request; `deadline` until then (a compositor that never answers must
  /// not leave the session without an idle lock).
  case asked(display: String, watch: IdleNotificationWatch, token: EventLoop.Token, deadline: EventLoop.Token?)
  /// No compositor shows it, or the one that does cannot time it (said in
  /// the journal): not looked at again until a socket appears (each look
  /// connects to every compositor and asks logind).
  case notByACompositor
}

extension Daemon {
  /// How long a compositor has to take the request.
  static let compositorIdleAnswerMilliseconds: Int64 = 5000

  /// Whether `session` (unlocked) is timed by its compositor, starting the
  /// watch when it can. `enabled`: an idle lock may come now.
  func followCompositorIdle(_ session: Logind.SessionInfo, enabled: Bool) -> Bool {
    guard enabled, !session.remote else {
      stopCompositorIdle(session.id)
      return false
    }
    switch sessions[session.id]?.compositorIdle {
    case .asked: return true
    case .notByACompositor: return false
    case nil: break
    }
    guard let display = waylandCompositor(showing: session) else {
      sessions[session.id]?.compositorIdle = .notByACompositor
      return false
    }
    // Only what an idle lock would lock: not a desktop that locks itself
    // (KWin offers the protocol too), nor with Wayland.Lock=vt a session
    // that has no VT.
    guard plan(session, compositor: compositor(for: session), selfLocking: selfLockingDesktop(of: session)).locks else {
      sessions[session.id]?.compositorIdle = .notByACompositor
      return false
    }
    guard let runtime = environment("XDG_RUNTIME_DIR"), let address = UnixSocketAddress(path: runtime + "/" + display) else {
      return false
    }
    let watch: IdleNotificationWatch
    do throws(SystemError) {
      let socket = try UnixSocket.connect(address, nonBlocking: true)
      do throws(SystemError) {
        watch = try IdleNotificationWatch(socket: socket, timeoutMilliseconds: UInt32(idle.timeoutSeconds) * 1000)
      } catch {
        socket.close()
        throw error
      }
    } catch {
      compositorIdleUnavailable(session.id, display: display, why: "cannot ask it: \(error)")
      return false
    }
    let id = session.id
    let token = loop.watch(watch.socket.rawValue) { [self] in
      for event in watch.readable() {
        // Events of a watch that was stopped meanwhile are not for the current one.
        guard case .asked(_, let current, _, _) = sessions[id]?.compositorIdle, current === watch else { return }
        compositorIdleEvent(event, session: id)
      }
    }
    let deadline = loop.after(milliseconds: Self.compositorIdleAnswerMilliseconds) { [self] in
      compositorIdleUnavailable(id, display: display, why: "no answer within \(Self.compositorIdleAnswerMilliseconds / 1000) s")
    }
    // The terminal's or IdleHint's timer, if one ran, is the compositor's now.
    idle.stop(id)
    sessions[id]?.compositorIdle = .asked(display: display, watch: watch, token: token, deadline: deadline)
    return true
  }

  func compositorIdleEvent(_ event: IdleNotificationWatch.Event, session id: String) {
    guard case .asked(let display, let watch, let token, let deadline) = sessions[id]?.compositorIdle else { return }
    switch event {
    case .watching:
      loop.cancel(deadline)
      sessions[id]?.compositorIdle = .asked(display: display, watch: watch, token: token, deadline: nil)
    case .idle:
      stopCompositorIdle(id)
      guard let session = sessions[id] else { return }
      lock(session.info, reason: "idle", grace: true)
      // A lock that could not start leaves the session timed again.
      if !isLocked(id) { updateIdleTimers() }
    case .resumed: break
    case .unsupported:
      compositorIdleUnavailable(id, display: display, why: "it offers no ext-idle-notify-v1")
    case .ended(let why):
      compositorIdleUnavailable(id, display: display, why: why)
    }
  }

  /// The compositor cannot time `id`: IdleWatcher does, as for a session
  /// without one, until another compositor socket appears.
  func compositorIdleUnavailable(_ id: String, display: String, why: String) {
    stopCompositorIdle(id)
    guard let session = sessions[id] else { return }
    let instead = session.info.isGraphical ? "session's IdleHint" : "terminal's input"
    Log.warning("session \(id): idle is not timed by the compositor (\(display)): \(why); the \(instead) times it")
    sessions[id]?.compositorIdle = .notByACompositor
    updateIdleTimers()
    followIdleHint(session.info)
  }

  /// Ends the watch (a lock, an inhibitor, a logout); that no compositor
  /// times the session is kept.
  func stopCompositorIdle(_ id: String) {
    guard case .asked(_, let watch, let token, let deadline) = sessions[id]?.compositorIdle else { return }
    loop.cancel(token)
    loop.cancel(deadline)
    watch.close()
    sessions[id]?.compositorIdle = nil
  }

  /// Every idle timer of `id`, the compositor's too (it locks, or is gone).
  func stopIdleTimers(_ id: String) {
    idle.stop(id)
    stopCompositorIdle(id)
  }

  /// The compositor's socket name of a session it times ("wayland-1"), once it agreed.
  func idleCompositor(of id: String) -> String? {
    guard case .asked(let display, _, _, .none) = sessions[id]?.compositorIdle else { return nil }
    return display
  }

  /// A compositor's socket appeared: sessions without a compositor that
  /// times them are looked at again.
  func lookForIdleCompositorsAgain() {
    for id in sessions.keys {
      if case .notByACompositor = sessions[id]?.compositorIdle { sessions[id]?.compositorIdle = nil }
    }
    updateIdleTimers()
  }
}
