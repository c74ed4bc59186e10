/// What a gatekeeper's answer to `status` means for locking, read one way by
/// every program that asks: the lock screens, the console holder, passlockd.
///
/// The fail-closed rule lives here: only the gatekeeper *saying* that no
/// passcode is set (or that it cannot work at all) keeps a session from being
/// locked. Anything that is not an answer (the gatekeeper killed or stopped,
/// a spawn refused, a broken pipe, a busy store) is `unknown`: a session is
/// locked all the same, and a lock that stands stays locked and asks again.
public enum StatusReading: Equatable, Sendable {
  /// A passcode is set: the unlock screen for this status.
  case passcodeSet(StoreStatus)
  /// The gatekeeper says no passcode is set: nothing to lock with; a lock
  /// that already stands asks for the account password.
  case noPasscode(StoreStatus)
  /// The store cannot be used as it is (the gatekeeper's message, with the
  /// fix): the passcode cannot be checked, the account password can.
  case storeRefused(String)
  /// The gatekeeper cannot work here (its message): no lock screen started
  /// from here could unlock anything, so nothing is locked, loudly.
  case gatekeeperUnavailable(String)
  /// No answer (why): not known now; ask again. Never "no passcode".
  case unknown(String)

  /// The reading of the gatekeeper's `result` frame.
  public init(_ result: AuthResult) {
    switch result.code {
    case .ok:
      guard let status = StoreStatus(fields: result.fields) else {
        self = .unknown("passlock-auth gave no status")
        return
      }
      self = status.passcodeSet ? .passcodeSet(status) : .noPasscode(status)
    case .storeError:
      self = .storeRefused(result.message ?? "the passcode store cannot be used")
    case .gatekeeperUnavailable:
      self = .gatekeeperUnavailable(result.message ?? "passlock-auth cannot work here")
    default:
      // A busy store, a protocol error, anything else: not an answer.
      self = .unknown(result.message ?? "passlock-auth answered \(result.code)")
    }
  }

  /// Whether a session should be locked on this reading: yes unless the
  /// gatekeeper said there is nothing to lock with.
  public var locks: Bool {
    switch self {
    case .passcodeSet, .storeRefused, .unknown: return true
    case .noPasscode, .gatekeeperUnavailable: return false
    }
  }

  /// The status, where the gatekeeper gave one.
  public var status: StoreStatus? {
    switch self {
    case .passcodeSet(let status), .noPasscode(let status): return status
    case .storeRefused, .gatekeeperUnavailable, .unknown: return nil
    }
  }

  /// A reading that is no answer: keep what was known before.
  public var isUnknown: Bool {
    if case .unknown = self { return true }
    return false
  }

  /// Why there is no passcode screen to show, in the user's words (nil for a
  /// passcode that is set).
  public var problem: String? {
    switch self {
    case .passcodeSet: return nil
    case .noPasscode: return CommandFailure.noPasscode.message
    case .storeRefused(let why), .gatekeeperUnavailable(let why), .unknown(let why): return why
    }
  }
}
