import PasslockCore
import Testing

/// One reading of the gatekeeper's status for every program (fail closed):
/// only its saying "no passcode" or "I cannot work here" keeps a lock from
/// being made; anything that is no answer locks, and a lock screen drawn
/// from any reading never gives the session back by itself.
@Suite struct StatusReadingTests {
  static let set = StoreStatus(
    passcodeSet: true, length: 4, failedAttempts: 2, retryAfterSeconds: 0, accountPasswordRequired: false, store: .user,
    directory: "/s", user: "alice")
  static var unset: StoreStatus {
    var status = set
    status.passcodeSet = false
    status.failedAttempts = 0
    return status
  }

  @Test(
    arguments: [
      (AuthResult(.ok, set.fields), StatusReading.passcodeSet(set), true),
      (AuthResult(.ok, unset.fields), .noPasscode(unset), false),
      (AuthResult(.ok, ["passcode_set": "1"]), .unknown("passlock-auth gave no status"), true),
      (AuthResult(.storeError, message: "passcode is corrupt"), .storeRefused("passcode is corrupt"), true),
      (AuthResult(.gatekeeperUnavailable, message: "no privileges"), .gatekeeperUnavailable("no privileges"), false),
      (AuthResult(.storeBusy, message: "busy"), .unknown("busy"), true),
      (AuthResult(.protocolError, message: "bad frame"), .unknown("bad frame"), true),
    ] as [(AuthResult, StatusReading, Bool)])
  func theGatekeepersAnswerRead(_ result: AuthResult, _ reading: StatusReading, _ locks: Bool) {
    #expect(StatusReading(result) == reading)
    #expect(StatusReading(result).locks == locks)
  }

  @Test func aScreenForEveryReading() {
    var screen = LockScreen(reading: .passcodeSet(Self.set), now: 0)
    #expect(screen.length == 4 && screen.failedAttempts == 2 && screen.notice == nil && screen.start().isEmpty)
    screen = LockScreen(reading: .noPasscode(Self.unset), now: 0)
    #expect(screen.notice == .noPasscode)
    #expect(screen.start() == [.clearEntry, .startAccountPassword], "the account password field opens")
    #expect(screen.key(.escape, now: 0) == [.bell], "and stays: nothing else unlocks")
    screen = LockScreen(reading: .storeRefused("chmod 600 it"), now: 0)
    #expect(screen.notice == .refused("chmod 600 it") && screen.start() == [.clearEntry, .startAccountPassword])
    screen = LockScreen(reading: .unknown("killed"), now: 0)
    #expect(screen.notice == .checking("killed") && screen.start().isEmpty && screen.length == nil)
    #expect(!screen.finished)
  }

  /// A full or read-only store: nothing checked, nothing counted, no shake;
  /// the account password field opens, and Esc goes back.
  @Test func anAttemptThatCannotBeRecordedOpensThePasswordField() {
    var screen = LockScreen(reading: .passcodeSet(Self.set), now: 0)
    for digit: UInt8 in [2, 5, 8] { _ = screen.key(.digit(digit), now: 0) }
    #expect(screen.key(.digit(0), now: 0).last == .submit(.current))
    #expect(screen.verdict(.unrecorded(.full), now: 10) == [.bell, .clearEntry, .startAccountPassword])
    #expect(screen.notice == .cannotRecord(.full) && screen.passwordMode && !screen.isShaking(now: 10))
    #expect(screen.failedAttempts == 2, "not counted")
    #expect(screen.key(.escape, now: 20) == [.clearEntry, .cancelAccountPassword])
  }

  @Test(
    arguments: [
      (LockScreen.Notice.checking(""), "Checking…"),
      (.checking("no answer in 5 s"), "Can't check now (no answer in 5 s); trying again…"),
      (.noPasscode, "No passcode is set: enter your account password"),
      (.cannotRecord(.full), "Can't record attempts: the disk is full. Use your account password."),
      (.cannotRecord(.readOnly), "Can't record attempts: the store is read-only. Use your account password."),
    ] as [(LockScreen.Notice, String)])
  func theWords(_ notice: LockScreen.Notice, _ text: String) {
    #expect(Texts(.english).notice(notice) == text)
    #expect(!Texts(.japanese).notice(notice).isEmpty)
  }

  /// A line wider than the terminal keeps its beginning, cut with "…".
  @Test func aLongLineKeepsItsBeginning() {
    var grid = ScreenGrid(width: 20, height: 1)
    grid.center("Can't check now (passlock-auth stopped); trying again…", row: 0)
    #expect(grid.line(0) == "Can't check now (pa…")
    #expect(TextWidth.fitting("short", into: 20) == "short")
  }

  @Test func unwritableFromErrno() {
    #expect(UnwritableStore(errno: 28) == .full)
    #expect(UnwritableStore(errno: 122) == .full)
    #expect(UnwritableStore(errno: 30) == .readOnly)
    #expect(UnwritableStore(errno: 5) == nil)
  }
}
