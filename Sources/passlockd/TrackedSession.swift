#if !PASSLOCK_ONE_MODULE
  import PasslockCore
#endif

/// Everything passlockd holds about one of the user's logind sessions: one
/// value per session in `Daemon.sessions`, so forgetting a session forgets
/// all of it (its idle timer is IdleWatcher's, stopped beside it; its compositor's
/// idle watch is closed by `Daemon.stopIdleTimers` first).
struct TrackedSession {
  var info: Logind.SessionInfo
  /// How it is locked (SessionLock); nil: unlocked.
  var lock: SessionLock?
  /// Why it could not be locked (shown in status, logged).
  var problem: String?
  /// How its lock differs from the plan, and why (status).
  var note: String?
  /// Its compositor refused or lost an in-session lock: locked without it
  /// until the session unlocks.
  var inSessionRefused = false
  /// Its lock screens' failures in a row (the restart's delay).
  var restarts = RestartBackoff()
  /// Its compositor's idle notification, or that none times it (Daemon+CompositorIdle).
  var compositorIdle: CompositorIdle?
  /// The compositor ("wayland-1/<Hyprland instance>") whose Hyprland
  /// option was asked about, and what to warn of (HyprlandLockRestore;
  /// shown by status).
  var hyprlandChecked: String?
  var compositorWarning: String?

  init(_ info: Logind.SessionInfo) { self.info = info }

  var id: String { info.id }
  var isLocked: Bool { lock != nil }

  /// Unlocked: what only a lock needed is forgotten.
  mutating func lockEnded() {
    lock = nil
    note = nil
    inSessionRefused = false
    restarts = RestartBackoff()
  }
}
