/// The life of one ext-session-lock-v1 lock (passlock-wayland), as a state
/// machine of the shape ConsoleLockSequence has: the compositor's events and
/// the controller's verdict in, what the client must do out. It decides the
/// one thing that matters: `unlock_and_destroy` is sent only for a lock the
/// compositor confirmed (`locked`) and only after an accepted verdict;
/// nothing else (no answer from the gatekeeper, a frame that cannot be
/// drawn, a compositor's nonsense) gives the session back.
public struct SessionLockLife: Hashable, Sendable {
  public enum Event: Equatable, Sendable {
    /// The lock was asked for (ext_session_lock_manager_v1.lock).
    case lockAsked
    /// ext_session_lock_v1.locked: every output shows our lock surfaces (or
    /// the compositor's locked background).
    case locked
    /// ext_session_lock_v1.finished: before `locked`, another lock holds it;
    /// after, the compositor ended the lock on its own.
    case finished
    /// The controller's verdict: the passcode, the account password or the
    /// external authenticator was accepted.
    case accepted
    /// The connection to the compositor broke.
    case connectionLost
  }

  public enum Effect: Equatable, Sendable {
    /// The ready byte for the waiting parent (passlockd): the lock is on screen.
    case reportReady
    /// Ask the gatekeeper for the status, now that the compositor has the lock.
    case askForStatus
    /// ext_session_lock_v1.unlock_and_destroy: the session is given back.
    case unlockAndDestroy
    /// The client ends; `how` says with what.
    case end(Ending)
  }

  public enum Ending: Equatable, Sendable {
    /// After an accepted verdict: exit 0.
    case unlocked
    /// `finished` before `locked`: another lock screen holds the lock (exit 3).
    case heldElsewhere
    /// `finished` after `locked`: the compositor ended it, not us.
    case endedByCompositor
    /// The compositor is gone (exit 129): nothing of ours unlocked.
    case compositorGone
  }

  public enum Phase: Hashable, Sendable {
    case idle
    case asked
    case locked
    case ended
  }

  public private(set) var phase: Phase = .idle
  /// The verdict came; once locked (or at once, if already), the unlock.
  public private(set) var accepted = false

  public init() {}

  public mutating func handle(_ event: Event) -> [Effect] {
    guard phase != .ended else { return [] }  // nothing after the end
    switch event {
    case .lockAsked:
      guard phase == .idle else { return [] }
      phase = .asked
      return []
    case .locked:
      guard phase == .asked else { return [] }  // a `locked` for no lock asked is nonsense
      phase = .locked
      return [.reportReady, .askForStatus] + (accepted ? unlock() : [])
    case .finished:
      let wasLocked = phase == .locked
      guard phase != .idle else { return [] }
      phase = .ended
      return [.end(wasLocked ? .endedByCompositor : .heldElsewhere)]
    case .accepted:
      guard !accepted else { return [] }
      accepted = true
      return phase == .locked ? unlock() : []
    case .connectionLost:
      phase = .ended
      return [.end(.compositorGone)]
    }
  }

  /// The one way the lock ends from our side.
  private mutating func unlock() -> [Effect] {
    phase = .ended
    return [.unlockAndDestroy, .end(.unlocked)]
  }
}
