/// Why the store cannot record an attempt: the passcode is then not checked
/// at all (an attempt that cannot be counted must not be allowed), and the
/// account password, which needs no write to unlock, is the way in.
public enum UnwritableStore: String, Sendable, Equatable {
  /// ENOSPC, EDQUOT: the file system (or the quota) is full.
  case full
  /// EROFS: the file system is mounted read-only.
  case readOnly = "read-only"

  /// The reason behind a failed write's errno, or nil when it is another failure.
  public init?(errno: Int32) {
    switch errno {
    case 28, 122: self = .full  // ENOSPC, EDQUOT
    case 30: self = .readOnly  // EROFS
    default: return nil
    }
  }

  /// The gatekeeper's field that carries it in a `storeUnwritable` result.
  public static let field = "reason"
}
