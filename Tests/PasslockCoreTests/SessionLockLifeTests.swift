import PasslockCore
import Testing

/// The Wayland lock's life (passlock-wayland): `unlock_and_destroy` only for
/// a lock the compositor confirmed and only after an accepted verdict; the
/// ready byte only after `locked`; nothing after the end.
@Suite struct SessionLockLifeTests {
  typealias L = SessionLockLife

  func steps(_ events: [L.Event]) -> [[L.Effect]] {
    var life = L()
    return events.map { life.handle($0) }
  }

  @Test func lockedThenAcceptedUnlocks() {
    #expect(
      steps([.lockAsked, .locked, .accepted])
        == [[], [.reportReady, .askForStatus], [.unlockAndDestroy, .end(.unlocked)]])
  }

  /// A verdict before `locked` (the external authenticator is quick) waits for it.
  @Test func aVerdictBeforeLockedWaitsForIt() {
    #expect(
      steps([.lockAsked, .accepted, .locked])
        == [[], [], [.reportReady, .askForStatus, .unlockAndDestroy, .end(.unlocked)]])
  }

  @Test func finishedBeforeLockedIsAnotherLockersAndAfterIsTheCompositors() {
    #expect(steps([.lockAsked, .finished, .locked, .accepted]) == [[], [.end(.heldElsewhere)], [], []])
    #expect(steps([.lockAsked, .locked, .finished, .accepted]).last == [])
    #expect(steps([.lockAsked, .locked, .finished])[2] == [.end(.endedByCompositor)])
  }

  /// A compositor that sends `locked` for no lock asked, or twice, moves nothing.
  @Test func nonsenseFromTheCompositorMovesNothing() {
    #expect(steps([.locked, .accepted, .finished]) == [[], [], []])
    #expect(steps([.lockAsked, .locked, .locked]).last == [])
  }

  @Test func aLostConnectionEndsWithoutAnUnlock() {
    #expect(steps([.lockAsked, .locked, .connectionLost, .accepted]) == [[], [.reportReady, .askForStatus], [.end(.compositorGone)], []])
  }

  struct Ghost: Hashable {
    var asked = false
    var lockedSeen = false
    var acceptedSeen = false
    var ended = false
    var readyReported = false
    var unlocked = false
  }

  /// Every order of the events, 10 long: the safety rules hold after each step.
  @Test func everyOrderOfEventsKeepsTheRules() {
    let check = ModelCheck<L, L.Event, L.Effect, Ghost>(
      machine: L(), ghost: Ghost(), events: [.lockAsked, .locked, .finished, .accepted, .connectionLost],
      handle: { $0.handle($1) },
      rule: { ghost, event, effects in
        if ghost.ended && !effects.isEmpty { return "effects after the end" }
        let lockedNow = ghost.lockedSeen || (event == .locked && ghost.asked)
        let acceptedNow = ghost.acceptedSeen || event == .accepted
        if effects.contains(.unlockAndDestroy) {
          if !lockedNow { return "unlock_and_destroy for a lock the compositor did not confirm" }
          if !acceptedNow { return "unlock_and_destroy without an accepted verdict" }
          if ghost.unlocked { return "unlocked twice" }
        }
        if effects.contains(.end(.unlocked)) != effects.contains(.unlockAndDestroy) { return "an unlocked end without the unlock" }
        if effects.contains(.reportReady) && (!lockedNow || ghost.readyReported) { return "the ready byte without `locked`, or twice" }
        return nil
      },
      watch: { ghost, event, effects in
        var next = ghost
        if event == .lockAsked { next.asked = true }
        if effects.contains(.reportReady) { next.lockedSeen = true }
        if event == .accepted { next.acceptedSeen = true }
        if effects.contains(.reportReady) { next.readyReported = true }
        if effects.contains(.unlockAndDestroy) { next.unlocked = true }
        if effects.contains(where: { if case .end = $0 { true } else { false } }) { next.ended = true }
        return next
      })
    let result = check.run(depth: 10)
    #expect(result.violation == nil, "\(result.violation ?? "")")
    #expect(result.states >= 8, "the check reached \(result.states) states")
  }
}
