import Glibc
import PasslockCore
import PasslockPOSIX
import PasslockStore
import Testing

/// The passcode store: yescrypt hashes, private files, the counter (the
/// same wrong passcode counted once, reset by a success, escalating
/// delays), and an interrupted write that loses nothing.
@Suite struct PasscodeStoreTests {
  @Test func roundTripRecordsLengthAndYescrypt() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("258046"))
    let record = try #require(try store.passcode())
    #expect(record.length == 6)
    #expect(record.hash.hasPrefix("$y$"))
    #expect(try store.verify(secret("258046"), now: 100) == .accepted)
    #expect(try store.verify(secret("258047"), now: 100) == .wrong(failures: 1, retryAfterSeconds: 0, accountPasswordRequired: false))
    #expect(try store.status(now: 100, user: "test").failedAttempts == 1)
  }

  @Test func filesAreWrittenPrivately() throws {
    let fixture = StoreFixture()
    try fixture.store().setPasscode(secret("2580"))
    var st = stat()
    stat(fixture.directory, &st)
    #expect(st.st_mode & 0o777 == 0o700)
    for name in ["passcode", "attempts"] {
      stat(fixture.directory + "/" + name, &st)
      #expect(st.st_mode & 0o777 == 0o600, "\(name)")
    }
  }

  @Test func sameWrongPasscodeTwiceCountsOnce() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    #expect(try store.verify(secret("1111"), now: 0) == .wrong(failures: 1, retryAfterSeconds: 0, accountPasswordRequired: false))
    #expect(try store.verify(secret("1111"), now: 0) == .wrong(failures: 1, retryAfterSeconds: 0, accountPasswordRequired: false))
    #expect(try store.verify(secret("2222"), now: 0) == .wrong(failures: 2, retryAfterSeconds: 0, accountPasswordRequired: false))
    #expect(try store.verify(secret("1111"), now: 0) == .wrong(failures: 3, retryAfterSeconds: 0, accountPasswordRequired: false))
  }

  @Test func successResetsTheCounter() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    for code in ["1111", "2222", "3333"] { _ = try store.verify(secret(code), now: 0) }
    #expect(try store.verify(secret("2580"), now: 0) == .accepted)
    #expect(try store.status(now: 0, user: "test").failedAttempts == 0)
    #expect(fixture.read("attempts") == AttemptRecord.cleared.succeeded(now: 0, boot: BootID.current()).serialized())
  }

  @Test func delaysEscalateAndLockOutAfterTheTenth() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    var now: Int64 = 1_000_000
    for attempt in 1...4 {
      #expect(
        try store.verify(secret("100\(attempt)"), now: now)
          == .wrong(failures: attempt, retryAfterSeconds: 0, accountPasswordRequired: false))
    }
    let expected: [(Int, Int64)] = [(5, 60), (6, 300), (7, 900), (8, 900), (9, 3600)]
    for (attempt, delay) in expected {
      #expect(
        try store.verify(secret("20\(attempt)0"), now: now)
          == .wrong(failures: attempt, retryAfterSeconds: delay, accountPasswordRequired: false))
      // While the delay runs the passcode is not even checked, right or wrong.
      #expect(try store.verify(secret("2580"), now: now + delay - 1) == .delayed(retryAfterSeconds: 1))
      #expect(try store.status(now: now + 1, user: "test").retryAfterSeconds == delay - 1)
      now += delay
    }
    #expect(
      try store.verify(secret("9999"), now: now) == .wrong(failures: 10, retryAfterSeconds: 0, accountPasswordRequired: true))
    #expect(try store.verify(secret("2580"), now: now + 100_000) == .accountPasswordRequired(reason: nil))
    #expect(try store.status(now: now, user: "test").accountPasswordRequired)
    try store.clearAttempts()
    #expect(try store.verify(secret("2580"), now: now) == .accepted)
  }

  @Test func anInterruptedWriteLeavesTheOldPasscodeValid() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    let before = fixture.read("passcode")
    let directory = try SecureDirectory(path: fixture.directory, owner: getuid(), create: false)
    let replacement = PasscodeRecord(length: 4, hash: "$y$j75$new$hash").serialized()
    #expect(throws: StoreFileError.self) {
      try directory.replace("passcode", with: replacement, failBeforeRename: true)
    }
    #expect(fixture.read("passcode") == before)
    #expect(try store.verify(secret("2580"), now: 0) == .accepted)
  }

  @Test func aCorruptCounterMeansAccountPasswordRequiredAndIsKept() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    fixture.write("attempts", "passlock-attempts 1\nfailures=zero\n")
    guard case .accountPasswordRequired(let reason?) = try store.verify(secret("2580"), now: 0) else {
      Issue.record("a corrupt counter must not allow a try")
      return
    }
    #expect(reason == "\(fixture.directory)/attempts is corrupt (expected 4 lines)")
    #expect(try store.status(now: 0, user: "test").accountPasswordRequired)
    #expect(fixture.read("attempts") == "passlock-attempts 1\nfailures=zero\n")
  }

  static let refusedPasscodeFiles: [(String, @Sendable (StoreFixture) -> Void, @Sendable (String) -> String)] = [
    (
      "world-readable", { $0.write("passcode", validRecord, mode: 0o644) },
      { "\($0)/passcode is readable or writable by others (mode 0644); run 'chmod 0600 \($0)/passcode'" }
    ),
    (
      "truncated", { $0.write("passcode", String(validRecord.dropLast(20))) },
      {
        "\($0)/passcode is corrupt (the file is truncated); it was left untouched. Remove it and set the passcode again, or restore it from a backup"
      }
    ),
    (
      "garbage", { $0.write("passcode", "\u{1}\u{2}garbage\n") },
      {
        "\($0)/passcode is corrupt (the first line is not 'passlock-passcode 1'); it was left untouched. Remove it and set the passcode again, or restore it from a backup"
      }
    ),
    (
      "symlink",
      { fixture in
        fixture.write("elsewhere", validRecord)
        symlink(fixture.directory + "/elsewhere", fixture.directory + "/passcode")
      },
      {
        "\($0)/passcode is a symbolic link; passlock refuses to follow it. Remove the link ('rm \($0)/passcode') and set the passcode again."
      }
    ),
  ]

  static let validRecord = PasscodeRecord(length: 4, hash: "$y$j75$abcdefgh$ijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL").serialized()

  @Test(arguments: refusedPasscodeFiles)
  func refusesBadPasscodeFilesWithTheFix(
    _ name: String, _ damage: @Sendable (StoreFixture) -> Void, _ message: @Sendable (String) -> String
  ) throws {
    let fixture = StoreFixture()
    _ = try fixture.store()
    damage(fixture)
    let before = fixture.read("passcode")
    do {
      _ = try fixture.store().verify(secret("2580"), now: 0)
      Issue.record("\(name) accepted")
    } catch {
      #expect("\(error)" == message(fixture.directory))
    }
    #expect(fixture.read("passcode") == before, "nothing is overwritten on the way")
    #expect(fixture.read("attempts") == nil, "no attempt is counted against a refused store")
  }

  @Test func refusesAnOpenDirectory() throws {
    let fixture = StoreFixture()
    _ = try fixture.store()
    chmod(fixture.directory, 0o755)
    #expect(throws: StoreFileError.self) { _ = try fixture.store(create: false) }
  }

  @Test(.enabled(if: getuid() == 0, "needs root to give a file to another owner"))
  func refusesAFileOwnedBySomeoneElse() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    chown(fixture.directory + "/passcode", 65534, 65534)
    do {
      _ = try store.passcode()
      Issue.record("a foreign passcode file was accepted")
    } catch {
      #expect(
        "\(error)"
          == "\(fixture.directory)/passcode is owned by uid 65534, not uid 0; run 'chown 0 \(fixture.directory)/passcode' or remove it")
    }
  }

  @Test func missingStoreMeansNoPasscode() throws {
    let fixture = StoreFixture()
    #expect(try PasscodeStore(fixture.location, create: false) == nil)
  }

  // MARK: Password first

  @Test func passwordFirstRefusesThePasscodeUntilTheAccountPasswordAndCountsNothing() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    let policy = PasswordFirstPolicy(afterBoot: true, everyHours: 0)
    let before = fixture.read("attempts")
    // A passcode set without the account password leaves it never used.
    #expect(try store.verify(secret("2580"), now: 10, boot: "b1", passwordFirst: policy) == .passwordFirst(.afterRestart))
    #expect(try store.verify(secret("1111"), now: 10, boot: "b1", passwordFirst: policy) == .passwordFirst(.afterRestart))
    #expect(fixture.read("attempts") == before, "nothing counted, right or wrong")
    let status = try store.status(now: 10, user: "test", passwordFirst: policy)
    #expect(status.passwordFirst == .afterRestart && status.accountPasswordRequired)
    #expect(store.externalRefusal(now: 10, boot: "b1", passwordFirst: policy) == "the account password is needed first")

    try store.clearAttempts(now: 20, boot: "b1")
    #expect(try store.verify(secret("1111"), now: 30, boot: "b1", passwordFirst: policy) != .passwordFirst(.afterRestart))
    #expect(try store.verify(secret("2580"), now: 30, boot: "b1", passwordFirst: policy) == .accepted)
    // The next boot asks again; a login's password (recorded) answers it.
    #expect(try store.verify(secret("2580"), now: 40, boot: "b2", passwordFirst: policy) == .passwordFirst(.afterRestart))
    try store.recordAccountPassword(now: 50, boot: "b2")
    #expect(try store.verify(secret("2580"), now: 60, boot: "b2", passwordFirst: policy) == .accepted)
    // Every 8 hours: 8 hours after that password, the passcode still works; a second later not.
    let hours = PasswordFirstPolicy(afterBoot: false, everyHours: 8)
    #expect(try store.verify(secret("2580"), now: 50 + 8 * 3600, boot: "b2", passwordFirst: hours) == .accepted)
    #expect(try store.verify(secret("2580"), now: 51 + 8 * 3600, boot: "b2", passwordFirst: hours) == .passwordFirst(.afterHours(8)))
  }

  @Test func passwordFirstNeverLiftsALockout() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    try store.recordAccountPassword(now: 0, boot: "b1")
    fixture.write("attempts", AttemptRecord(failures: 10, lastPassword: 0, lastPasswordBoot: "b1").serialized())
    // recordAccountPassword (a login's password) does not clear the counter.
    try store.recordAccountPassword(now: 5, boot: "b1")
    let policy = PasswordFirstPolicy(afterBoot: true, everyHours: 0)
    #expect(try store.verify(secret("2580"), now: 10, boot: "b1", passwordFirst: policy) == .accountPasswordRequired(reason: nil))
    #expect(try store.status(now: 10, user: "test", passwordFirst: policy).failedAttempts == 10)
  }

  @Test func aNewPasscodeKeepsTheAccountPasswordsLastUse() throws {
    let fixture = StoreFixture()
    let store = try fixture.store()
    try store.setPasscode(secret("2580"))
    try store.recordAccountPassword(now: 77, boot: "b1")
    try store.setPasscode(secret("1357"))
    #expect(fixture.read("attempts")?.contains("last_password=77\nlast_password_boot=b1\n") == true)
  }
}
