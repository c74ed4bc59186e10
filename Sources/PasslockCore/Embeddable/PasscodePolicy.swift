/// What a passcode may look like: 4–16 ASCII digits, and not trivially guessable
/// unless the user insists (iOS asks "use anyway?"; we take `--allow-simple`).
public enum PasscodePolicy {
  public static let lengths: ClosedRange<Int> = 4...16

  /// Why a candidate passcode was refused. `description` is the user-facing sentence.
  public enum Violation: Error, Equatable, CustomStringConvertible {
    case notDigits
    case tooShort
    case tooLong
    case singleDigitRepeated
    case ascendingRun
    case descendingRun

    public var description: String {
      switch self {
      case .notDigits: return "a passcode may contain only the digits 0-9"
      case .tooShort: return "a passcode needs at least \(PasscodePolicy.lengths.lowerBound) digits"
      case .tooLong: return "a passcode may have at most \(PasscodePolicy.lengths.upperBound) digits"
      case .singleDigitRepeated: return "a passcode of one repeated digit is easy to guess"
      case .ascendingRun: return "a run of ascending digits is easy to guess"
      case .descendingRun: return "a run of descending digits is easy to guess"
      }
    }

    /// True for the refusals `--allow-simple` overrides.
    public var isSimplicity: Bool {
      switch self {
      case .singleDigitRepeated, .ascendingRun, .descendingRun: return true
      case .notDigits, .tooShort, .tooLong: return false
      }
    }
  }

  /// Checks `digits` (ASCII bytes, never a `String`: it is a secret).
  public static func check(_ digits: UnsafeRawBufferPointer, allowSimple: Bool) -> Violation? {
    guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .notDigits }
    if digits.count < lengths.lowerBound { return .tooShort }
    if digits.count > lengths.upperBound { return .tooLong }
    if allowSimple { return nil }
    var allSame = true
    var ascending = true
    var descending = true
    for i in 1..<digits.count {
      let step = Int(digits[i]) - Int(digits[i - 1])
      allSame = allSame && step == 0
      // Runs wrap around like a phone keypad's row: 7890 and 0987 are runs too.
      ascending = ascending && (step == 1 || step == -9)
      descending = descending && (step == -1 || step == 9)
    }
    if allSame { return .singleDigitRepeated }
    if ascending { return .ascendingRun }
    if descending { return .descendingRun }
    return nil
  }
}
