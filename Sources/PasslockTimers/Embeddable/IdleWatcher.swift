#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Locks a TTY session after `timeoutSeconds` without input. The idle clock is
/// the TTY device's access time, which reading input updates (logind uses the
/// same signal). One timer per session at atime + timeout + slack; when it
/// fires the device is stat'ed again: moved means re-arm, unmoved means lock.
/// No polling.
///
/// The slack: the kernel moves a tty's atime only when the new time falls in
/// another 8-second bucket (`tty_update_time` in drivers/tty/tty_io.c), so the
/// last key may have come up to 8 s after the atime shows. Waiting those 8 s
/// too means the lock never comes early: it comes 0–8 s after the timeout.
public final class IdleWatcher {
  public let timeoutSeconds: Int
  /// How far a tty's atime may lag the last input.
  public static let atimeGranularity: Int64 = 8
  let onIdle: (String) -> Void
  let loop: EventLoop
  /// A terminal's access time (wall-clock seconds), or nil when it is gone.
  let accessTime: (String) -> Int64?
  private var timers: [String: (tty: String, timer: EventLoop.Token)] = [:]

  public init(
    timeoutSeconds: Int, loop: EventLoop, accessTime: @escaping (String) -> Int64? = terminalAccessTime,
    onIdle: @escaping (String) -> Void
  ) {
    self.timeoutSeconds = timeoutSeconds
    self.loop = loop
    self.accessTime = accessTime
    self.onIdle = onIdle
  }

  /// The deadline, in seconds from now: next idle time.
  public private(set) var deadlines: [String: Int64] = [:]

  /// An idle inhibitor of the user's holds every idle lock off.
  public private(set) var heldOff = false
  /// When the last one went (wall-clock seconds): the idle time counts from
  /// then, or from the last input if that is later. Counting from the last
  /// input alone would lock at once after a film that ran longer than the
  /// timeout, while the user is still watching its end; from then on the
  /// user gets the whole timeout, as swayidle and GNOME give it.
  public private(set) var resumedAt: Int64 = 0

  public func holdOff(_ held: Bool) {
    guard held != heldOff else { return }
    heldOff = held
    if held {
      for id in Array(timers.keys) + Array(hintTimers.keys) { stop(id) }
    } else {
      resumedAt = loop.clock.wallClockSeconds
    }
  }

  /// Watches exactly `sessions` (unlocked, local, with a TTY).
  public func update(sessions: [LogindSession], enabled: Bool) {
    guard timeoutSeconds > 0, enabled, !heldOff else {
      for id in timers.keys { stop(id) }
      return
    }
    let ids = Set(sessions.map { $0.id })
    for id in timers.keys where !ids.contains(id) { stop(id) }
    for session in sessions where timers[session.id] == nil { arm(session.id, tty: session.tty) }
  }

  public func stop(_ id: String) {
    loop.cancel(timers[id]?.timer)
    timers[id] = nil
    loop.cancel(hintTimers[id])
    hintTimers[id] = nil
    deadlines[id] = nil
  }

  /// Graphical sessions have no TTY to watch: they publish logind's IdleHint
  /// and IdleSinceHint instead (GNOME, swayidle's idlehint), announced with
  /// PropertiesChanged. One timer at IdleSinceHint + timeout while idle;
  /// none while active.
  private var hintTimers: [String: EventLoop.Token] = [:]

  public func hint(_ id: String, idle: Bool, sinceMicroseconds: UInt64, enabled: Bool) {
    loop.cancel(hintTimers[id])
    hintTimers[id] = nil
    deadlines[id] = nil
    guard enabled, timeoutSeconds > 0, idle, !heldOff else { return }
    let since = max(Int64(sinceMicroseconds), resumedAt * 1_000_000)
    let deadlineMicroseconds = since + Int64(timeoutSeconds) * 1_000_000
    let deadline = deadlineMicroseconds / 1_000_000
    // To the microsecond: whole seconds would lock up to a second early.
    hintTimers[id] = loop.after(microseconds: deadlineMicroseconds - loop.clock.wallClockMicroseconds) { [self] in
      hintTimers[id] = nil
      deadlines[id] = nil
      onIdle(id)
    }
    deadlines[id] = deadline
  }

  private func arm(_ id: String, tty: String) {
    guard let atime = accessTime(tty) else { return }
    let deadline = self.deadline(lastInputAtime: atime)
    let wait = max(0, deadline - loop.clock.wallClockSeconds)
    // A monotonic deadline (wall-clock timers would fire at once after a
    // clock jump); the atime is re-read when it fires, so a jump costs nothing.
    loop.cancel(timers[id]?.timer)
    let timer = loop.after(milliseconds: wait * 1000) { [self] in fired(id, tty: tty) }
    timers[id] = (tty, timer)
    deadlines[id] = deadline
  }

  /// A TTY session's idle lock time: the timeout after its last input (the
  /// atime, plus the 8 s it may lag), or after the last idle inhibitor went.
  private func deadline(lastInputAtime atime: Int64) -> Int64 {
    max(atime + Self.atimeGranularity, resumedAt) + Int64(timeoutSeconds)
  }

  private func fired(_ id: String, tty: String) {
    guard let atime = accessTime(tty) else { return stop(id) }
    if deadline(lastInputAtime: atime) > loop.clock.wallClockSeconds {
      arm(id, tty: tty)  // input arrived meanwhile
    } else {
      stop(id)
      onIdle(id)
    }
  }
}

// The default access time, under a name the watcher's own `accessTime` does
// not hide (a module-qualified call would not build where the module is
// the program).
@usableFromInline func terminalAccessTime(_ path: String) -> Int64? { accessTime(ofPath: path) }
