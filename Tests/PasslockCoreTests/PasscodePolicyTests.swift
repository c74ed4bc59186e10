import PasslockCore
import Testing

/// Which passcodes `passlock set` refuses (too short or long, not digits,
/// one digit repeated, a run) unless told to allow simple ones, each
/// refusal saying why.
@Suite struct PasscodePolicyTests {
  static let cases: [(String, Bool, PasscodePolicy.Violation?)] = [
    ("2580", false, nil),
    ("135792", false, nil),
    ("8264019375", false, nil),
    ("123", false, .tooShort),
    ("", false, .tooShort),
    ("12345678901234567", false, .tooLong),
    ("25801379461234", false, nil),  // 14 digits, contains a run but is not one
    ("12a4", false, .notDigits),
    ("12 4", false, .notDigits),
    ("１２３４", false, .notDigits),  // full-width digits are not ASCII digits
    ("1111", false, .singleDigitRepeated),
    ("0000000000000000", false, .singleDigitRepeated),
    ("1234", false, .ascendingRun),
    ("456789", false, .ascendingRun),
    ("7890", false, .ascendingRun),
    ("987654", false, .descendingRun),
    ("3210", false, .descendingRun),
    ("1111", true, nil),
    ("1234", true, nil),
    ("987654", true, nil),
    ("123", true, .tooShort),
    ("12a4", true, .notDigits),
  ]

  @Test(arguments: cases)
  func check(_ passcode: String, _ allowSimple: Bool, _ expected: PasscodePolicy.Violation?) {
    var bytes = Array(passcode.utf8)
    let violation = bytes.withUnsafeMutableBytes { PasscodePolicy.check(UnsafeRawBufferPointer($0), allowSimple: allowSimple) }
    #expect(violation == expected)
  }

  @Test func everyRefusalSaysWhy() {
    let all: [PasscodePolicy.Violation] = [.notDigits, .tooShort, .tooLong, .singleDigitRepeated, .ascendingRun, .descendingRun]
    #expect(
      all.map(\.description) == [
        "a passcode may contain only the digits 0-9",
        "a passcode needs at least 4 digits",
        "a passcode may have at most 16 digits",
        "a passcode of one repeated digit is easy to guess",
        "a run of ascending digits is easy to guess",
        "a run of descending digits is easy to guess",
      ])
    #expect(all.filter(\.isSimplicity) == [.singleDigitRepeated, .ascendingRun, .descendingRun])
  }
}
