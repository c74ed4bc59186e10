import PasslockCore
import Testing

/// "Password first, passcode after": when the root-held policy asks for the
/// account password before the passcode, and how that travels.
@Suite struct PasswordFirstTests {
  static let hour: Int64 = 3600

  static let cases: [(PasswordFirstPolicy, Int64, String, PasswordFirst?, String)] = [
    (.off, 0, "", nil, "off: never"),
    (PasswordFirstPolicy(afterBoot: true, everyHours: 0), 0, "", .afterRestart, "never used"),
    (PasswordFirstPolicy(afterBoot: true, everyHours: 0), 1000, "old-boot", .afterRestart, "used in another boot"),
    (PasswordFirstPolicy(afterBoot: true, everyHours: 0), 1000, "this-boot", nil, "used in this boot"),
    (PasswordFirstPolicy(afterBoot: false, everyHours: 8), 0, "", .afterHours(8), "hours: never used"),
    (PasswordFirstPolicy(afterBoot: false, everyHours: 8), 100_000 - 8 * hour, "old-boot", nil, "hours: exactly 8 hours ago"),
    (PasswordFirstPolicy(afterBoot: false, everyHours: 8), 100_000 - 8 * hour - 1, "this-boot", .afterHours(8), "hours: over 8"),
    (PasswordFirstPolicy(afterBoot: false, everyHours: 8), 110_000, "this-boot", nil, "hours: a clock set back a little is now"),
    (PasswordFirstPolicy(afterBoot: false, everyHours: 8), 200_000, "this-boot", .afterHours(8), "hours: a use far ahead asks again"),
    (PasswordFirstPolicy(afterBoot: true, everyHours: 8), 1, "this-boot", .afterHours(8), "both: this boot, long ago"),
    (PasswordFirstPolicy(afterBoot: true, everyHours: 8), 99_000, "old-boot", .afterRestart, "both: recent, other boot"),
  ]

  @Test(arguments: cases)
  func theRule(_ policy: PasswordFirstPolicy, _ last: Int64, _ lastBoot: String, _ expected: PasswordFirst?, _ what: String) {
    #expect(policy.requirement(lastPassword: last, lastPasswordBoot: lastBoot, now: 100_000, boot: "this-boot") == expected, "\(what)")
  }

  @Test func theConfigurationSetsIt() throws {
    var config = Config()
    #expect(PasswordFirstPolicy(config).isOff)
    try config.merge("[Authentication]\nPasswordAfterBoot=yes\nPasswordEveryHours=72\n", file: "t")
    #expect(PasswordFirstPolicy(config) == PasswordFirstPolicy(afterBoot: true, everyHours: 72))
    #expect(throws: ConfigError.self) { try config.merge("[Authentication]\nPasswordEveryHours=-1\n", file: "t") }
  }

  @Test func itTravelsInTheStatusAndTheVerdict() throws {
    for why in [PasswordFirst.afterRestart, .afterHours(12)] {
      #expect(PasswordFirst(field: why.field) == why)
      #expect(VerifyOutcome(VerifyOutcome.passwordFirst(why).result) == .passwordFirst(why))
      let status = StoreStatus(
        passcodeSet: true, length: 4, failedAttempts: 0, retryAfterSeconds: 0, accountPasswordRequired: true, store: .system,
        directory: "/d", user: "u", passwordFirst: why)
      #expect(StoreStatus(fields: status.fields) == status)
      #expect(status.text().contains(why.sentence))
      #expect(status.json().contains("\"password_first\":\"\(why.field)\""))
    }
    #expect(PasswordFirst(field: "") == nil && PasswordFirst(field: "hours:0") == nil && PasswordFirst(field: "hours:x") == nil)
    // A lockout's answer is not mistaken for it.
    #expect(VerifyOutcome(VerifyOutcome.accountPasswordRequired(reason: nil).result) == .accountPasswordRequired(reason: nil))
  }

  @Test func theLockScreenAsksForThePasswordAndSaysWhy() {
    let status = StoreStatus(
      passcodeSet: true, length: 4, failedAttempts: 2, retryAfterSeconds: 0, accountPasswordRequired: true, store: .system,
      directory: "/d", user: "u", passwordFirst: .afterRestart)
    var screen = LockScreen(unlocking: status, now: 0)
    #expect(screen.notice == .passwordFirst(.afterRestart))
    #expect(screen.start() == [.clearEntry, .startAccountPassword])
    #expect(Texts(.english).notice(screen.notice!) == "Enter your password once after a restart")
    #expect(!screen.notice!.isError, "it says what comes first: not in the error colour")
    // Typing the password leaves the reason standing.
    _ = screen.key(.text(UInt8(ascii: "x")), now: 1)
    #expect(screen.notice == .passwordFirst(.afterRestart))

    // A verdict saying so (the hours ran out while it was locked) opens the
    // password field the same way, and counts nothing.
    var open = LockScreen(flow: .unlock, length: 4, failedAttempts: 1, now: 0)
    #expect(open.verdict(.passwordFirst(.afterHours(8)), now: 5) == [.clearEntry, .startAccountPassword])
    #expect(open.notice == .passwordFirst(.afterHours(8)) && open.failedAttempts == 1 && open.passwordMode)
  }

  /// Passcode only while locked: a display manager's stack only while a
  /// session of the user's is locked; every other stack, and every stack
  /// with the policy off, as before (logind not even asked).
  @Test func passcodeOnlyWhileLockedBindsOnlyDisplayManagers() {
    var asked = 0
    func locked(_ answer: Bool) -> () -> Bool {
      {
        asked += 1
        return answer
      }
    }
    #expect(!DisplayManagerStack.allows(service: "gdm-password", onlyWhileLocked: true, anyLocked: locked(false)))
    #expect(DisplayManagerStack.allows(service: "gdm-password", onlyWhileLocked: true, anyLocked: locked(true)))
    #expect(!DisplayManagerStack.allows(service: "lightdm", onlyWhileLocked: true, anyLocked: locked(false)))
    #expect(asked == 3)
    for service in ["login", "su", "sudo", "passlock", "kde", nil] as [String?] {
      #expect(DisplayManagerStack.allows(service: service, onlyWhileLocked: true, anyLocked: locked(false)), "\(service ?? "nil")")
    }
    #expect(DisplayManagerStack.allows(service: "gdm-password", onlyWhileLocked: false, anyLocked: locked(false)))
    #expect(asked == 3, "logind is asked only for a display manager's stack under the policy")
  }
}
