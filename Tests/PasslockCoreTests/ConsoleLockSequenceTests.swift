import PasslockCore
import Testing

/// passlock-vt's lock sequence, every ordering, without root or a VT: each
/// row feeds events and expects exactly these effects, in this order.
@Suite struct ConsoleLockSequenceTests {
  typealias S = ConsoleLockSequence
  typealias R = ConsoleLockSequence.Refusal

  /// Feeds `steps` (an event and the effects it must give) to a new sequence.
  func expectSteps(_ steps: [(S.Event, [S.Effect])], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    var sequence = S()
    for (index, (event, effects)) in steps.enumerated() {
      let got = sequence.handle(event)
      #expect(got == effects, "\(comment), step \(index + 1) (\(event))", sourceLocation: sourceLocation)
    }
  }

  static let standing: [S.Effect] = [.lowerPriority, .reportReady, .supervise]

  @Test func withTheHoldersFrameTheLockScreenStartsOnceSwitchingIsLocked() {
    expectSteps(
      [
        (.prepared(painted: true, stale: false), [.raisePriority, .lockSwitching]),
        (.switchingLocked, [.startLockScreen, .settle]),
        (.lockScreenStarted, [.startStatusCheck]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), [.awaitFirstFrameAndStatus]),
        (.firstFrame(.drawn), []),
        (.statusAnswered(refusal: nil), Self.standing),
      ], "painted")
  }

  @Test func withoutItTheLockScreenStartsBeforeTheSwitch() {
    expectSteps(
      [
        (.prepared(painted: false, stale: false), [.startLockScreen, .raisePriority, .lockSwitching]),
        (.lockScreenStarted, []),
        (.switchingLocked, [.startStatusCheck, .settle]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), [.awaitFirstFrameAndStatus]),
        (.firstFrame(.drawn), []),
        (.statusAnswered(refusal: nil), Self.standing),
      ], "not painted")
  }

  /// Over a killed holder's lock the frame and the status come first:
  /// giving back afterwards would undo that lock too.
  @Test func overAStaleLockTheChecksComeBeforeTheLock() {
    expectSteps(
      [
        (.prepared(painted: true, stale: true), [.startLockScreen, .raisePriority, .startStatusCheck, .awaitFirstFrameAndStatus]),
        (.lockScreenStarted, []),
        (.firstFrame(.drawn), []),
        (.statusAnswered(refusal: nil), [.lockSwitching]),
        (.switchingLocked, [.settle]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), Self.standing),
      ], "stale")
    expectSteps(
      [
        (.prepared(painted: false, stale: true), [.startLockScreen, .raisePriority, .startStatusCheck, .awaitFirstFrameAndStatus]),
        (.lockScreenStarted, []),
        (.firstFrame(.drawn), []),
        (
          .statusAnswered(refusal: "No passcode is set"),
          [
            .stopLockScreen, .abandon(R("the lock screen cannot start: No passcode is set; refusing to lock")),
          ]
        ),
      ], "stale, no passcode: nothing locked, the stale lock untouched")
  }

  /// A cached status can make the lock screen draw; only the holder's own
  /// answer lets the lock stand.
  @Test func noPasscodeGivesTheConsoleBack() {
    expectSteps(
      [
        (.prepared(painted: true, stale: false), [.raisePriority, .lockSwitching]),
        (.switchingLocked, [.startLockScreen, .settle]),
        (.lockScreenStarted, [.startStatusCheck]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), [.awaitFirstFrameAndStatus]),
        (.firstFrame(.drawn), []),
        (
          .statusAnswered(refusal: "No passcode is set"),
          [
            .stopLockScreen, .giveBack(R("the lock screen cannot start: No passcode is set; refusing to lock")),
          ]
        ),
      ], "no passcode")
  }

  /// Fail closed: once switching is locked, only the gatekeeper saying that
  /// nothing could unlock gives the console back. A lock screen that drew
  /// nothing in time or exited is no reason: the lock stands, and
  /// supervision starts lock screens until one is unlocked.
  @Test(
    arguments: [
      (S.FrameOutcome.late, nil, ConsoleLockSequenceTests.standing),
      (.late, "No passcode is set", [.stopLockScreen, .giveBack(R("the lock screen cannot start: No passcode is set; refusing to lock"))]),
      (.exited(status: 2), nil, ConsoleLockSequenceTests.standing),
      (.exited(status: 2), "No passcode is set", [.giveBack(R("the lock screen cannot start: No passcode is set; refusing to lock"))]),
    ] as [(S.FrameOutcome, String?, [S.Effect])])
  func onlyTheGatekeepersRefusalGivesTheConsoleBack(_ frame: S.FrameOutcome, _ refusal: String?, _ effects: [S.Effect]) {
    expectSteps(
      [
        (.prepared(painted: false, stale: false), [.startLockScreen, .raisePriority, .lockSwitching]),
        (.lockScreenStarted, []),
        (.switchingLocked, [.startStatusCheck, .settle]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), [.awaitFirstFrameAndStatus]),
        (.firstFrame(frame), []),
        (.statusAnswered(refusal: refusal), effects),
      ], "\(frame), \(refusal ?? "no refusal")")
  }

  /// The caller could stop the holder between the checks and the lock.
  @Test func aSessionThatChangedWhileLockingIsGivenBack() {
    let shared = R("another user has a session on this seat", status: .sharedSeat)
    expectSteps(
      [
        (.prepared(painted: true, stale: false), [.raisePriority, .lockSwitching]),
        (.switchingLocked, [.startLockScreen, .settle]),
        (.lockScreenStarted, [.startStatusCheck]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(shared), [.cancelStatusCheck, .stopLockScreen, .giveBack(shared)]),
      ], "session changed")
  }

  /// Over a stale lock the status check is used up before the lock: a
  /// failure after it stops the lock screen and cancels nothing.
  @Test func aStaleLockThatFailsOrWhoseSessionChanged() {
    let before: [(S.Event, [S.Effect])] = [
      (.prepared(painted: true, stale: true), [.startLockScreen, .raisePriority, .startStatusCheck, .awaitFirstFrameAndStatus]),
      (.lockScreenStarted, []),
      (.firstFrame(.drawn), []),
      (.statusAnswered(refusal: nil), [.lockSwitching]),
      (.switchingLocked, [.settle]),
    ]
    expectSteps(before + [(.lockFailed, [.stopLockScreen, .abandon(nil)])], "stale, the lock fails")
    let changed = R("the session on screen changed while locking; refusing to lock")
    expectSteps(
      before + [(.settled, [.checkSessionAgain]), (.sessionChecked(changed), [.stopLockScreen, .giveBack(changed)])],
      "stale, the session changed")
  }

  @Test func aLockThatFailsIsAbandonedWithItsOwnError() {
    expectSteps(
      [
        (.prepared(painted: false, stale: false), [.startLockScreen, .raisePriority, .lockSwitching]),
        (.lockScreenStarted, []),
        (.switchingLocked, [.startStatusCheck, .settle]),
        (.lockFailed, [.cancelStatusCheck, .stopLockScreen, .abandon(nil)]),
      ], "the display server does not let go")
  }

  @Test func aLockScreenThatDoesNotStart() {
    expectSteps(
      [
        (.prepared(painted: false, stale: false), [.startLockScreen, .raisePriority, .lockSwitching]),
        (.lockScreenDidNotStart("posix_spawn: No such file"), [.abandon(R("posix_spawn: No such file"))]),
      ], "before the lock: nothing locked")
    // Once switching is locked (a spawn refused at RLIMIT_NPROC): the lock
    // stands, and supervision starts the lock screen again.
    expectSteps(
      [
        (.prepared(painted: true, stale: false), [.raisePriority, .lockSwitching]),
        (.switchingLocked, [.startLockScreen, .settle]),
        (.lockScreenDidNotStart("posix_spawn: Resource temporarily unavailable"), [.startStatusCheck]),
        (.settled, [.checkSessionAgain]),
        (.sessionChecked(nil), [.awaitFirstFrameAndStatus]),
        (.statusAnswered(refusal: nil), Self.standing),
      ], "once locked: the lock stands")
  }

  /// Only an exit 0 unlocks; others restart, at once while they ran a
  /// while, then with a backoff, then the emergency text.
  @Test func onlyExitZeroUnlocksAndFailuresRestart() {
    var sequence = S()
    for (event, _) in [
      (S.Event.prepared(painted: true, stale: false), ()), (.switchingLocked, ()), (.lockScreenStarted, ()), (.settled, ()),
      (.sessionChecked(nil), ()), (.firstFrame(.drawn), ()), (.statusAnswered(refusal: nil), ()),
    ] {
      _ = sequence.handle(event)
    }
    #expect(sequence.phase == .supervising)
    #expect(sequence.handle(.lockScreenExited(status: 137, ranForSeconds: 120)) == [.restartLockScreen(afterMilliseconds: 0)])
    #expect(sequence.handle(.lockScreenStarted) == [.supervise])
    var effects: [S.Effect] = []
    for _ in 0..<6 {
      effects = sequence.handle(.lockScreenExited(status: 1, ranForSeconds: 0.1))
      _ = sequence.handle(.lockScreenStarted)
    }
    #expect(effects == [.showEmergency, .restartLockScreen(afterMilliseconds: 30_000)], "kept failing: the way out is shown")
    #expect(sequence.handle(.lockScreenDidNotStart("posix_spawn")) == [.showEmergency, .restartLockScreen(afterMilliseconds: 5_000)])
    #expect(sequence.handle(.lockScreenExited(status: 0, ranForSeconds: 3)) == [.unlock])
    #expect(sequence.phase == .ended)
  }
}

/// The events the holder can report in each phase: any other is a bug in
/// its interpreter, trapped in debug builds (the model check below explores
/// only the expected ones).
@Suite struct ConsoleLockSequencePhaseTests {
  typealias S = ConsoleLockSequence

  @Test func eventsOutOfPhaseAreNotExpected() {
    var sequence = S()
    #expect(sequence.expects(.prepared(painted: true, stale: false)))
    for event: S.Event in [
      .switchingLocked, .settled, .sessionChecked(nil), .firstFrame(.drawn), .lockScreenExited(status: 0, ranForSeconds: 1),
    ] {
      #expect(!sequence.expects(event), "\(event) before the lock VT is prepared")
    }
    _ = sequence.handle(.prepared(painted: true, stale: false))
    #expect(sequence.expects(.switchingLocked) && sequence.expects(.lockScreenStarted))
    #expect(!sequence.expects(.prepared(painted: true, stale: false)), "prepared twice")
    #expect(!sequence.expects(.lockScreenExited(status: 0, ranForSeconds: 1)), "an unlock before the lock stands")
    for event: S.Event in [.switchingLocked, .settled, .sessionChecked(nil), .firstFrame(.drawn), .statusAnswered(refusal: nil)] {
      _ = sequence.handle(event)
    }
    #expect(sequence.phase == .supervising)
    #expect(!sequence.expects(.statusAnswered(refusal: nil)), "a second status answer")
    _ = sequence.handle(.lockScreenExited(status: 0, ranForSeconds: 1))
    #expect(sequence.phase == .ended)
    #expect(!sequence.expects(.lockScreenStarted) && !sequence.expects(.lockScreenExited(status: 0, ranForSeconds: 1)), "after the end")
  }
}

/// Every order of the console holder's events, 8 long: the console is given
/// back only when the gatekeeper said nothing could unlock it or the
/// session changed, unlocked only by a lock screen's exit 0, and nothing
/// follows the end.
@Suite struct ConsoleLockSequenceModelTests {
  typealias S = ConsoleLockSequence

  struct Ghost: Hashable {
    var ended = false
    var readyReported = false
  }

  @Test func everyOrderOfEventsKeepsTheRules() {
    let refusal = S.Refusal("another user has a session on this seat", status: .sharedSeat)
    let events: [S.Event] = [
      .prepared(painted: true, stale: false), .prepared(painted: false, stale: false), .prepared(painted: true, stale: true),
      .lockScreenStarted, .lockScreenDidNotStart("posix_spawn: Resource temporarily unavailable"), .switchingLocked, .lockFailed,
      .settled, .sessionChecked(nil), .sessionChecked(refusal), .firstFrame(.drawn), .firstFrame(.exited(status: 2)),
      .firstFrame(.late), .statusAnswered(refusal: nil), .statusAnswered(refusal: "No passcode is set"),
      .lockScreenExited(status: 0, ranForSeconds: 20), .lockScreenExited(status: 1, ranForSeconds: 0),
      .lockScreenExited(status: 137, ranForSeconds: 20),
    ]
    let check = ModelCheck<S, S.Event, S.Effect, Ghost>(
      machine: S(), ghost: Ghost(), events: events,
      handle: { $0.handle($1) },
      rule: { ghost, event, effects in
        if ghost.ended && !effects.isEmpty { return "effects after the end" }
        for effect in effects {
          switch effect {
          case .unlock:
            guard case .lockScreenExited(0, _) = event else { return "unlocked without a lock screen's exit 0" }
          case .giveBack:
            switch event {
            case .statusAnswered(let why) where why != nil: break
            case .sessionChecked(let why) where why != nil: break
            default: return "the console given back on \(event), which is no refusal"
            }
          case .reportReady:
            if ghost.readyReported { return "the ready byte twice" }
          default: break
          }
        }
        return nil
      },
      watch: { ghost, _, effects in
        var next = ghost
        for effect in effects {
          switch effect {
          case .unlock, .giveBack, .abandon: next.ended = true
          case .reportReady: next.readyReported = true
          default: break
          }
        }
        return next
      },
      enabled: { $0.expects($1) })
    let result = check.run(depth: 8)
    #expect(result.violation == nil, "\(result.violation ?? "")")
    #expect(result.states >= 50, "the check reached \(result.states) states")
  }
}
