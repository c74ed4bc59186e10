import PasslockCore
import Testing

/// passlockd's sleep handshake: the sleep goes on only once every session
/// that gets a lock screen shows it (or is covered), never on an error, and
/// only the gatekeeper saying no passcode is set lets it go without locks.
@Suite struct SleepHandshakeTests {
  typealias H = SleepHandshake

  static let status = StoreStatus(
    passcodeSet: true, length: 4, failedAttempts: 0, retryAfterSeconds: 0, accountPasswordRequired: false, store: .user,
    directory: "/s", user: "alice")
  static var none: StoreStatus {
    var status = Self.status
    status.passcodeSet = false
    return status
  }
  static let set = H.Event.statusChecked(.passcodeSet(status))
  static let unset = H.Event.statusChecked(.noPasscode(none))
  static let killed = H.Event.statusChecked(.unknown("passlock-auth ended without a result"))

  func expectSteps(_ steps: [(H.Event, [H.Effect])], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    var handshake = H()
    for (index, (event, effects)) in steps.enumerated() {
      let got = handshake.handle(event, now: Int64(index) * 10)
      #expect(got == effects, "\(comment), step \(index + 1) (\(event))", sourceLocation: sourceLocation)
    }
  }

  @Test func theSleepGoesOnOnceEveryLockIsOnScreen() {
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.inhibitorGranted, []),
        (.prepareForSleep(sessions: ["a", "b"]), [.lock(["a", "b"]), .checkStatus(afterMilliseconds: 25)]),
        (.lockPresented("a"), []),
        (Self.set, []),
        (.lockPresented("b"), [.letSleep(afterMilliseconds: 30)]),
        (.resumed, [.takeInhibitor]),
      ], "two sessions")
  }

  /// Fail closed: a failed status check is no "no passcode". Before any
  /// answer the daemon locks as if one were set; a failure later keeps the
  /// last answer; the sleep waits for the locks either way.
  @Test func aFailedCheckIsNeverNoPasscode() {
    expectSteps(
      [
        (Self.killed, [.takeInhibitor]),
        (.inhibitorGranted, []),
        (.prepareForSleep(sessions: ["a"]), [.lock(["a"]), .checkStatus(afterMilliseconds: 25)]),
        (Self.killed, []),
        (.lockFailed("a"), []),
        (.lockPresented("a"), [.letSleep(afterMilliseconds: 30)]),
      ], "no answer at all")
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.prepareForSleep(sessions: ["a"]), [.lock(["a"]), .checkStatus(afterMilliseconds: 25)]),
        (.statusChecked(.unknown("fork: Resource temporarily unavailable")), []),
        (.statusChecked(.storeRefused("corrupt")), []),
        (.lockPresented("a"), [.letSleep(afterMilliseconds: 30)]),
      ], "answers lost after a passcode was seen")
  }

  /// The gatekeeper saying no passcode is set lets a prepared sleep go on;
  /// said long ago, it is asked again first.
  @Test func noPasscodeLetsTheSleepGo() {
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.inhibitorGranted, []),
        (.prepareForSleep(sessions: ["a"]), [.lock(["a"]), .checkStatus(afterMilliseconds: 25)]),
        (Self.unset, [.releaseInhibitor, .letSleep(afterMilliseconds: 10)]),
      ], "removed behind the daemon's back")
    expectSteps(
      [
        (Self.unset, []),
        (.prepareForSleep(sessions: ["a"]), [.checkStatus(afterMilliseconds: 0)]),
        (Self.set, [.lock(["a"])]),
        (.lockPresented("a"), [.letSleep(afterMilliseconds: 20)]),
      ], "set since the last answer")
    expectSteps(
      [
        (Self.unset, []),
        (.prepareForSleep(sessions: ["a"]), [.checkStatus(afterMilliseconds: 0)]),
        (Self.unset, [.letSleep(afterMilliseconds: 10)]),
      ], "still not set")
  }

  @Test func sessionsThatCannotShowALockDoNotHoldTheSleep() {
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.prepareForSleep(sessions: ["a", "b", "c"]), [.lock(["a", "b", "c"]), .checkStatus(afterMilliseconds: 25)]),
        (.cannotLock("b"), []),
        (.sessionRemoved("c"), []),
        (.lockPresented("a"), [.letSleep(afterMilliseconds: 30)]),
      ], "a background X session, a logout")
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.prepareForSleep(sessions: ["g"]), [.lock(["g"]), .checkStatus(afterMilliseconds: 25)]),
        (.leftToDesktop("g"), [.letSleep(afterMilliseconds: 10)]),
      ], "GNOME Shell locks it by itself: nothing to wait for")
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.prepareForSleep(sessions: []), [.checkStatus(afterMilliseconds: 25), .letSleep(afterMilliseconds: 0)]),
      ],
      "nothing to lock")
  }

  /// A lock started again during a prepared sleep (a covering console lock
  /// refused for a shared seat) is waited for too.
  @Test func aLockStartedAgainIsWaitedFor() {
    expectSteps(
      [
        (Self.set, [.takeInhibitor]),
        (.prepareForSleep(sessions: ["a"]), [.lock(["a"]), .checkStatus(afterMilliseconds: 25)]),
        (.lockPresented("b"), []),
        (.lockStarted("b"), []),
        (.lockPresented("a"), []),
        (.lockPresented("b"), [.letSleep(afterMilliseconds: 40)]),
      ], "b covered, then locked on its own")
  }

  @Test func anInhibitorGrantedWhileNotWantedIsGivenBack() {
    expectSteps(
      [
        (Self.set, [.takeInhibitor]), (.prepareForSleep(sessions: ["a"]), [.lock(["a"]), .checkStatus(afterMilliseconds: 25)]),
        (.inhibitorGranted, [.releaseInhibitor]),
      ],
      "granted on the way to sleep")
  }

  struct Ghost: Hashable {
    var preparing = false
    var released = false
    var saidNotSet = false
    var waiting: Set<String> = []
  }

  /// Every order of the events, 8 long: the rules hold after each step.
  @Test func everyOrderOfEventsKeepsTheRules() {
    let events: [H.Event] = [
      Self.set, Self.unset, Self.killed, .statusChecked(.storeRefused("corrupt")),
      .prepareForSleep(sessions: ["a", "b"]), .lockPresented("a"), .lockPresented("b"), .lockFailed("a"),
      .lockStarted("c"), .lockPresented("c"), .cannotLock("b"), .leftToDesktop("b"), .sessionRemoved("a"), .resumed, .inhibitorGranted,
      .inhibitorLost,
    ]
    let check = ModelCheck<H, H.Event, H.Effect, Ghost>(
      machine: H(), ghost: Ghost(), events: events,
      handle: { $0.handle($1, now: 0) },
      rule: { ghost, event, effects in
        let released = effects.contains { if case .letSleep = $0 { true } else { false } }
        var after = ghost
        Self.watch(&after, event)
        if released {
          if !after.preparing { return "a sleep let go that was not prepared" }
          if ghost.released { return "a sleep let go twice" }
          if !after.waiting.isEmpty && !after.saidNotSet { return "the sleep let go before \(after.waiting.sorted()) showed a lock" }
          if case .lockFailed = event { return "a failure let the sleep go" }
        }
        if effects.contains(.takeInhibitor) && after.preparing { return "an inhibitor asked for on the way to sleep" }
        if after.saidNotSet && effects.contains(where: { if case .lock = $0 { true } else { false } }) {
          return "a lock without a passcode"
        }
        return nil
      },
      watch: { ghost, event, effects in
        var next = ghost
        Self.watch(&next, event)
        if effects.contains(where: { if case .letSleep = $0 { true } else { false } }) { next.released = true }
        return next
      })
    let result = check.run(depth: 8)
    #expect(result.violation == nil, "\(result.violation ?? "")")
    #expect(result.states >= 40, "the check reached \(result.states) states")
  }

  /// What the rules know of the past: the ghost's own bookkeeping.
  static func watch(_ ghost: inout Ghost, _ event: H.Event) {
    switch event {
    case .statusChecked(let reading):
      switch reading {
      case .passcodeSet, .storeRefused: ghost.saidNotSet = false
      case .noPasscode, .gatekeeperUnavailable: ghost.saidNotSet = true
      case .unknown: break
      }
    case .prepareForSleep(let sessions):
      ghost.preparing = true
      ghost.released = false
      ghost.waiting = sessions
    case .lockPresented(let id), .sessionRemoved(let id), .cannotLock(let id), .leftToDesktop(let id):
      ghost.waiting.remove(id)
    case .lockStarted(let id):
      if ghost.preparing && !ghost.released && !ghost.saidNotSet { ghost.waiting.insert(id) }
    case .resumed:
      ghost.preparing = false
      ghost.released = false
      ghost.waiting = []
    case .lockFailed, .inhibitorGranted, .inhibitorLost:
      break
    }
  }
}
