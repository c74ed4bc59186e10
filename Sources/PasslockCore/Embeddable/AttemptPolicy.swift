/// The escalating delays after wrong passcodes, as iOS applies them.
///
/// Failures 1–4 cost nothing; the 5th makes the next try wait 1 minute, the 6th
/// 5 minutes, the 7th and 8th 15 minutes, the 9th an hour; from the 10th on the
/// passcode is refused and only the account password opens the session.
public enum AttemptPolicy {
  /// From this many failures on, the passcode is no longer accepted.
  public static let lockoutFailures = 10

  /// What a given number of consecutive failures means for the next try.
  public enum Consequence: Equatable, Sendable {
    case none
    case delay(seconds: Int64)
    case accountPasswordRequired
  }

  public static func consequence(afterFailures failures: Int) -> Consequence {
    switch failures {
    case ..<5: return .none
    case 5: return .delay(seconds: 60)
    case 6: return .delay(seconds: 5 * 60)
    case 7, 8: return .delay(seconds: 15 * 60)
    case 9: return .delay(seconds: 60 * 60)
    default: return .accountPasswordRequired
    }
  }

  /// The longest delay the policy ever imposes after `failures`; used to cap a
  /// stored deadline when the wall clock was set back.
  public static func delaySeconds(afterFailures failures: Int) -> Int64 {
    if case .delay(let seconds) = consequence(afterFailures: failures) { return seconds }
    return 0
  }
}
