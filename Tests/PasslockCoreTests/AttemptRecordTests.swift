import PasslockCore
import Testing

/// The attempt record: iOS's delays by failure count, deadlines a clock set
/// back cannot lengthen, and the record and passcode files round-trip and
/// refuse what is corrupt or foreign.
@Suite struct AttemptRecordTests {
  static let delays: [(Int, AttemptPolicy.Consequence)] = [
    (0, .none), (1, .none), (2, .none), (3, .none), (4, .none),
    (5, .delay(seconds: 60)), (6, .delay(seconds: 300)), (7, .delay(seconds: 900)),
    (8, .delay(seconds: 900)), (9, .delay(seconds: 3600)),
    (10, .accountPasswordRequired), (11, .accountPasswordRequired), (12, .accountPasswordRequired),
  ]

  @Test(arguments: delays)
  func consequenceAfterFailures(_ failures: Int, _ expected: AttemptPolicy.Consequence) {
    #expect(AttemptPolicy.consequence(afterFailures: failures) == expected)
  }

  @Test(arguments: delays)
  func countingAnAttemptStoresItsDeadline(_ failures: Int, _ expected: AttemptPolicy.Consequence) {
    guard failures >= 1 else { return }
    let before = AttemptRecord(failures: failures - 1)
    let counted = before.countingAttempt(now: 1_000)
    #expect(counted.failures == failures)
    switch expected {
    case .none:
      #expect(counted.gate(now: 1_000) == .open)
    case .delay(let seconds):
      #expect(counted.retryAfter == 1_000 + seconds)
      #expect(counted.gate(now: 1_000) == .wait(seconds: seconds))
      #expect(counted.gate(now: 1_000 + seconds - 1) == .wait(seconds: 1))
      #expect(counted.gate(now: 1_000 + seconds) == .open)
    case .accountPasswordRequired:
      #expect(counted.gate(now: 1_000 + 1_000_000) == .accountPasswordRequired)
    }
  }

  @Test func aClockSetBackDoesNotLengthenTheDelay() {
    let record = AttemptRecord(failures: 5, retryAfter: 10_000)
    #expect(record.gate(now: 0) == .wait(seconds: 60))
  }

  @Test func roundTripsThroughItsFile() throws {
    let record = AttemptRecord(
      failures: 7, retryAfter: 1_764_000_000, lastWrongHash: "$y$j9T$salt$hash", lastSuccess: 1_763_990_000,
      lastSuccessBoot: "0d3c1a4e-5b6f", externalFailures: 2, lastPassword: 1_763_980_000, lastPasswordBoot: "77ab-01")
    #expect(
      record.serialized() == """
        passlock-attempts 3
        failures=7
        retry_after=1764000000
        last_wrong=$y$j9T$salt$hash
        last_success=1763990000
        last_success_boot=0d3c1a4e-5b6f
        external_failures=2
        last_password=1763980000
        last_password_boot=77ab-01

        """)
    #expect(try AttemptRecord.parse(record.serialized()) == record)
    // Version 2 files, from before password first: the password never used.
    #expect(
      try AttemptRecord.parse(
        "passlock-attempts 2\nfailures=1\nretry_after=0\nlast_wrong=\nlast_success=5\nlast_success_boot=ab\nexternal_failures=0\n")
        == AttemptRecord(failures: 1, lastSuccess: 5, lastSuccessBoot: "ab"))
    // Version 1 files, from before the external authenticator, still read.
    #expect(
      try AttemptRecord.parse("passlock-attempts 1\nfailures=3\nretry_after=9\nlast_wrong=\n")
        == AttemptRecord(failures: 3, retryAfter: 9))
  }

  static let corrupt: [(String, String)] = [
    ("", "the file is truncated"),
    ("passlock-attempts 1\nfailures=3\nretry_after=0\nlast_wrong=", "the file is truncated"),
    ("garbage\n", "the first line is not 'passlock-attempts 3'"),
    (
      "passlock-attempts 3\nfailures=1\nretry_after=0\nlast_wrong=\nlast_success=0\nlast_success_boot=\nexternal_failures=0\n"
        + "last_password=-5\nlast_password_boot=\n",
      "last_password is not a time"
    ),
    (
      "passlock-attempts 3\nfailures=1\nretry_after=0\nlast_wrong=\nlast_success=0\nlast_success_boot=\nexternal_failures=0\n"
        + "last_password=5\nlast_password_boot=a/b\n",
      "last_password_boot is not a boot id"
    ),
    (
      "passlock-attempts 2\nfailures=1\nretry_after=0\nlast_wrong=\nlast_success=0\nlast_success_boot=../x\nexternal_failures=0\n",
      "last_success_boot is not a boot id"
    ),
    (
      "passlock-attempts 2\nfailures=1\nretry_after=0\nlast_wrong=\nlast_success=0\nlast_success_boot=\nexternal_failures=-2\n",
      "external_failures is not a count"
    ),
    ("passlock-attempts 1\nfailures=3\n", "expected 4 lines"),
    ("passlock-attempts 1\nfailures=-1\nretry_after=0\nlast_wrong=\n", "failures is not a count"),
    ("passlock-attempts 1\nfailures=x\nretry_after=0\nlast_wrong=\n", "failures is not a count"),
    ("passlock-attempts 1\nfailures=1\nretry_after=soon\nlast_wrong=\n", "retry_after is not a time"),
    ("passlock-attempts 1\nretry_after=0\nfailures=1\nlast_wrong=\n", "expected 'failures=' on its own line"),
    ("passlock-attempts 1\nfailures=1\nretry_after=0\nlast_wrong=1234\n", "last_wrong is not a hash"),
  ]

  @Test(arguments: corrupt)
  func refusesCorruptFiles(_ text: String, _ reason: String) {
    #expect(throws: RecordFormatError(reason: reason)) { try AttemptRecord.parse(text) }
  }

  @Test func passcodeRecordRoundTripsAndRefusesForeignHashes() throws {
    let record = PasscodeRecord(length: 6, hash: "$y$j9T$abc$def")
    #expect(try PasscodeRecord.parse(record.serialized()) == record)
    #expect(throws: RecordFormatError(reason: "hash is not a yescrypt hash")) {
      try PasscodeRecord.parse("passlock-passcode 1\nlength=6\nhash=$6$salt$sha512\n")
    }
    #expect(throws: RecordFormatError(reason: "length is not between 4 and 16")) {
      try PasscodeRecord.parse("passlock-passcode 1\nlength=3\nhash=$y$j9T$abc$def\n")
    }
  }
}

/// When the external authenticator is offered: after a passcode success in
/// this boot, and off again after its own failures.
@Suite struct ExternalRulesTests {
  static let boot = "0d3c1a4e-5b6f-4a70-9d81-2e3f4a5b6c7d"

  @Test func offeredAfterAPasscodeSuccessInThisBoot() {
    #expect(AttemptRecord.cleared.succeeded(now: 1000, boot: Self.boot).externalRefusal(now: 2000, boot: Self.boot) == nil)
    var lockedOut = AttemptRecord.cleared.succeeded(now: 1000, boot: Self.boot)
    lockedOut.failures = 10
    #expect(lockedOut.externalRefusal(now: 2000, boot: Self.boot) == "the account password is required")
  }

  @Test func notAfterBootUntilOnePasscodeSuccess() {
    #expect(AttemptRecord().externalRefusal(now: 10, boot: Self.boot) == "the passcode is needed once after boot")
    let earlierBoot = AttemptRecord.cleared.succeeded(now: 1000, boot: "another-boot")
    #expect(earlierBoot.externalRefusal(now: 2000, boot: Self.boot) == "the passcode is needed once after boot")
  }

  @Test func notWhenTheLastPasscodeSuccessIsOver48HoursOld() {
    let record = AttemptRecord.cleared.succeeded(now: 1000, boot: Self.boot)
    #expect(record.externalRefusal(now: 1000 + 48 * 3600, boot: Self.boot) == nil)
    #expect(record.externalRefusal(now: 1001 + 48 * 3600, boot: Self.boot) == "the passcode is needed every 48 hours")
  }

  @Test func fiveFailuresDisableItUntilThePasscodeSucceeds() {
    var record = AttemptRecord.cleared.succeeded(now: 1, boot: Self.boot)
    record.externalFailures = 4
    #expect(record.externalRefusal(now: 1, boot: Self.boot) == nil)
    record.externalFailures = 5
    #expect(record.externalRefusal(now: 1, boot: Self.boot) == "too many failures; enter the passcode")
    #expect(AttemptRecord.cleared.succeeded(now: 2, boot: Self.boot).externalFailures == 0)
    // The account password clears passcode failures, not the external count.
    #expect(record.clearingFailures().externalFailures == 5)
  }

  // MARK: Password first

  @Test func aPasscodeSuccessKeepsTheAccountPasswordsLastUse() {
    let used = AttemptRecord.cleared.afterAccountPassword(now: 100, boot: "b1")
    let after = AttemptRecord(failures: 3, lastWrongHash: "$y$x").afterAccountPassword(now: 200, boot: "b2")
    #expect(after.failures == 0 && after.lastWrongHash.isEmpty && after.lastPassword == 200 && after.lastPasswordBoot == "b2")
    let success = used.succeeded(now: 300, boot: "b1")
    #expect(success.lastPassword == 100 && success.lastPasswordBoot == "b1" && success.lastSuccess == 300)
  }
}
