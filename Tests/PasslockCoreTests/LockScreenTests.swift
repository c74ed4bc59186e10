import PasslockCore
import Testing

/// The lock screen's state machine: digits, delete, submit, the shake and
/// delays refusing input, setting a passcode.
@Suite struct LockScreenTests {
  @Test func theLastDigitOfAStoredLengthSubmits() {
    var screen = LockScreen(flow: .unlock, length: 4, now: 0)
    #expect(screen.key(.digit(2), now: 0) == [.append(0x32)])
    _ = screen.key(.digit(5), now: 0)
    _ = screen.key(.digit(8), now: 0)
    #expect(screen.key(.digit(0), now: 0) == [.append(0x30), .submit(.current)])
    #expect(screen.busy)
    #expect(screen.key(.digit(1), now: 0) == [], "input is refused while checking")
    #expect(screen.verdict(.accepted(next: nil, length: nil), now: 10) == [.clearEntry, .finish])
    #expect(screen.finished)
  }

  @Test func deleteAndClear() {
    var screen = LockScreen(flow: .unlock, length: 6, now: 0)
    _ = screen.key(.digit(1), now: 0)
    _ = screen.key(.digit(2), now: 0)
    #expect(screen.key(.delete, now: 0) == [.deleteLast])
    #expect(screen.entered == 1)
    #expect(screen.key(.clear, now: 0) == [.clearEntry])
    #expect(screen.entered == 0)
    #expect(screen.key(.delete, now: 0) == [])
  }

  @Test func enterSubmitsANewPasscodeOnlyFromFourDigits() {
    var screen = LockScreen(flow: .create, length: nil, now: 0)
    #expect(screen.step == .new)
    for d: UInt8 in [1, 3, 5] { _ = screen.key(.digit(d), now: 0) }
    #expect(screen.key(.enter, now: 0) == [.bell])
    _ = screen.key(.digit(7), now: 0)
    #expect(screen.key(.enter, now: 0) == [.submit(.new)])
    #expect(screen.verdict(.accepted(next: .confirm, length: 4), now: 0) == [.clearEntry])
    #expect(screen.step == .confirm && screen.length == 4)
  }

  @Test func aMismatchGoesBackToTheFirstEntry() {
    var screen = LockScreen(flow: .create, length: nil, now: 0)
    _ = screen.verdict(.accepted(next: .confirm, length: 4), now: 0)
    #expect(screen.verdict(.mismatch, now: 0) == [.clearEntry, .bell])
    #expect(screen.step == .new && screen.length == nil && screen.notice == .mismatch)
  }

  @Test func aWrongPasscodeShakesAndRefusesInputMeanwhile() {
    var screen = LockScreen(flow: .unlock, length: 4, now: 0)
    for d: UInt8 in [1, 1, 1, 1] { _ = screen.key(.digit(d), now: 0) }
    #expect(screen.verdict(.wrong(failures: 1, retryAfterSeconds: 0, lockedOut: false), now: 1000) == [.clearEntry, .bell])
    #expect(screen.notice == .wrongPasscode && screen.failedAttempts == 1)
    #expect(screen.shakeOffset(now: 1000) != 0)
    #expect(screen.key(.digit(2), now: 1200) == [], "refused during the shake")
    #expect(screen.shakeOffset(now: 1300) == 0)
    #expect(screen.key(.digit(2), now: 1300) == [.append(0x32)])
    #expect(screen.notice == nil, "typing again clears the message")
  }

  @Test func aDelayRefusesInputUntilItEnds() {
    var screen = LockScreen(flow: .unlock, length: 4, now: 0)
    for d: UInt8 in [1, 1, 1, 1] { _ = screen.key(.digit(d), now: 0) }
    _ = screen.verdict(.wrong(failures: 5, retryAfterSeconds: 60, lockedOut: false), now: 0)
    #expect(screen.secondsUntilRetry(now: 500) == 60)
    #expect(screen.secondsUntilRetry(now: 59_001) == 1)
    #expect(screen.key(.digit(3), now: 59_999) == [])
    #expect(screen.key(.digit(3), now: 60_000) == [.append(0x33)])
  }

  @Test func aLockoutRefusesEverything() {
    var screen = LockScreen(flow: .unlock, length: 4, failedAttempts: 10, lockedOut: true, now: 0)
    #expect(screen.notice == .accountPasswordRequired)
    for key: InputParser.Key in [.digit(1), .enter, .delete, .clear] { #expect(screen.key(key, now: 1_000_000) == []) }
  }

  @Test func revealingTheLastDigitCanBeTurnedOff() {
    var screen = LockScreen(flow: .unlock, length: 4, revealLastDigit: false, now: 0)
    _ = screen.key(.digit(7), now: 0)
    #expect(screen.visibleDigit(now: 1) == nil)
    var shown = LockScreen(flow: .unlock, length: 4, now: 0)
    _ = shown.key(.digit(7), now: 0)
    #expect(shown.visibleDigit(now: 499) == 7)
    #expect(shown.visibleDigit(now: 500) == nil)
  }
}
