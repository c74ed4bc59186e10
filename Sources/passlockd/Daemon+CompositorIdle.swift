import PasslockPOSIX
import PasslockWaylandIdle

/// Idle from the compositor: a session whose Wayland compositor passlockd
/// finds (WaylandCompositors: one started by a display manager, or from a
/// console login) is timed by the compositor's own ext-idle-notify-v1, not
/// by its terminal's access time (which keys typed in a compositor do not
/// move: a console-started compositor would idle-lock while in use) nor by
/// logind's IdleHint (which only an idle daemon sets). The compositor counts
/// every input it sees and honours its idle inhibitors (a fullscreen video,
/// sway's `inhibit_idle`); logind's idle inhibitors still hold it off here.
/// A compositor without the protocol, or whose watch ended, leaves the
/// session to IdleWatcher as before, until a new compositor socket appears.
enum CompositorIdle {
  /// Asked for on `display`; `watching` once the compositor took the request.
  case asked(display: String, watch: IdleNotificationWatch, token: EventLoop.Token, watching: Bool)
  /// The compositor at `display` cannot time it (why: logged, and shown by status).
  case unavailable(display: String, why: String)
}

extension Daemon {
  /// Whether `session` (unlocked, lockable) is timed by its compositor,
  /// starting the watch when it can. `enabled`: an idle lock may come now.
  func followCompositorIdle(_ session: Logind.SessionInfo, enabled: Bool) -> Bool {
    guard enabled, !session.remote else {
      stopCompositorIdle(session.id)
      return false
    }
    switch sessions[session.id]?.compositorIdle {
    case .asked: return true
    case .unavailable: return false
    case nil: break
    }
    guard let display = WaylandCompositors.display(of: session, logind: logind),
      let runtime = environment("XDG_RUNTIME_DIR"), let address = UnixSocketAddress(path: runtime + "/" + display)
    else { return false }
    // Only what an idle lock would lock: not a desktop that locks itself
    // (KWin offers the protocol too), nor with Wayland.Lock=vt a session
    // that has no VT.
    guard plan(session, compositor: compositor(for: session), selfLocking: selfLockingDesktop(of: session)).locks else {
      sessions[session.id]?.compositorIdle = .unavailable(display: display, why: "nothing for an idle lock to lock")
      return false
    }
    let watch: IdleNotificationWatch
    do {
      let socket = try UnixSocket.connect(address, nonBlocking: true)
      do {
        watch = try IdleNotificationWatch(socket: socket, timeoutMilliseconds: UInt32(idle.timeoutSeconds) * 1000)
      } catch {
        socket.close()
        throw error
      }
    } catch {
      compositorIdleUnavailable(session.id, display: display, why: "cannot ask it: \(error)")
      return false
    }
    let token = loop.watch(watch.socket.rawValue) { [unowned self] in
      for event in watch.readable() { compositorIdleEvent(event, session: session.id) }
    }
    // The terminal's or IdleHint's timer, if one ran, is the compositor's now.
    idle.stop(session.id)
    sessions[session.id]?.compositorIdle = .asked(display: display, watch: watch, token: token, watching: false)
    return true
  }

  func compositorIdleEvent(_ event: IdleNotificationWatch.Event, session id: String) {
    guard case .asked(let display, let watch, let token, _) = sessions[id]?.compositorIdle else { return }
    switch event {
    case .watching:
      sessions[id]?.compositorIdle = .asked(display: display, watch: watch, token: token, watching: true)
    case .idle:
      stopCompositorIdle(id)
      if let session = sessions[id] { lock(session.info, reason: "idle", grace: true) }
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
    Log.warning(
      "session \(id): idle is not timed by the compositor (\(display)): \(why); the \(sessions[id]?.info.isGraphical == true ? "session's IdleHint" : "terminal's input") times it"
    )
    sessions[id]?.compositorIdle = .unavailable(display: display, why: why)
    updateIdleTimers()
    if let session = sessions[id] { followIdleHint(session.info) }
  }

  /// Ends the watch (a lock, an inhibitor, a logout); what was learnt of an
  /// unavailable compositor is kept.
  func stopCompositorIdle(_ id: String) {
    guard case .asked(_, let watch, let token, _) = sessions[id]?.compositorIdle else { return }
    loop.cancel(token)
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
    guard case .asked(let display, _, _, true) = sessions[id]?.compositorIdle else { return nil }
    return display
  }
}
