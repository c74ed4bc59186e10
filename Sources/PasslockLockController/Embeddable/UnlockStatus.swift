import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// The status an unlock screen's first frame is drawn from, for every lock
/// screen (terminal and Wayland): the one StatusCache kept from the last lock,
/// so the frame need not wait for the gatekeeper; without one, the
/// gatekeeper's own answer, asked at once so that it starts up while the
/// front end prepares everything else (the two run on different cores).
///
/// Before anything is locked only two answers keep the lock from being
/// made: the gatekeeper saying no passcode is set, or that it cannot work
/// here (a missing gatekeeper likewise: nothing could unlock). Anything that
/// is no answer (it was killed, could not be started, broke the protocol)
/// locks all the same, with the status unknown: the controller asks again.
public struct UnlockStatus {
  /// The cached status; the gatekeeper is then asked once the first frame
  /// is up (`LockController.askForStatus`), so it does not compete with it.
  public let cached: StoreStatus?
  private let pending: PendingRequest?
  /// Why the gatekeeper could not be started.
  private let startFailure: String?

  /// Reads the cache, or starts the gatekeeper's status request. No
  /// gatekeeper at its path (cache or not): nothing could ever unlock.
  public static func begin(gatekeeper: GatekeeperClient) throws(CommandFailure) -> UnlockStatus {
    guard access(gatekeeper.path, X_OK) == 0 else { throw .gatekeeper(ClientError.missingGatekeeper(gatekeeper.path).description) }
    if let cached = StatusCache.read() { return UnlockStatus(cached: cached, pending: nil, startFailure: nil) }
    do { return UnlockStatus(cached: nil, pending: try gatekeeper.start(.status), startFailure: nil) } catch {
      return UnlockStatus(cached: nil, pending: nil, startFailure: error.briefly)
    }
  }

  /// What to draw the first frame from: the cached status, or the
  /// gatekeeper's reading (waited for, at most the status deadline). Throws
  /// only where nothing may be locked: no passcode, or a gatekeeper that
  /// cannot work here, and only while the lock is still to be made
  /// (`alreadyLocked` false). Over a lock that stands (the console holder's
  /// VT, a lock passlockd keeps and this screen replaces), every reading
  /// gets a screen: the account password, or "Checking…".
  public func first(alreadyLocked: Bool = false) throws(CommandFailure) -> StatusReading {
    if let cached { return .passcodeSet(cached) }
    let reading: StatusReading
    if let pending {
      if pending.output.becomesReadable(withinMilliseconds: LockController.statusDeadlineMilliseconds) {
        let answer: Result<AuthResult, ClientError>
        do { answer = .success(try pending.finish { _, _, _ in false }) } catch { answer = .failure(error) }
        reading = Self.read(answer)
      } else {
        // Stopped or stuck: no answer.
        pending.cancel()
        reading = .unknown("no answer in \(LockController.statusDeadlineMilliseconds / 1000) s")
      }
    } else {
      reading = .unknown(startFailure ?? "passlock-auth did not start")
    }
    switch reading {
    case .noPasscode where !alreadyLocked: throw .noPasscode
    case .gatekeeperUnavailable(let why) where !alreadyLocked: throw CommandFailure(.gatekeeperUnavailable, message: why)
    case .gatekeeperUnavailable(let why): return .unknown(why)
    case .noPasscode, .passcodeSet, .storeRefused, .unknown: return reading
    }
  }

  /// Whether the screen drawn from `first` still awaits the gatekeeper's
  /// answer: a cached status, or none at all.
  public func awaitsAnswer(after first: StatusReading) -> Bool { cached != nil || first.isUnknown }

  /// The gatekeeper's answer, read, with the cache kept in step: saved for
  /// the next lock screen when a passcode is set, dropped when the answer
  /// says otherwise, left alone when there was no answer.
  public static func read(_ answer: Result<AuthResult, ClientError>) -> StatusReading {
    let reading: StatusReading
    switch answer {
    case .success(let result): reading = StatusReading(result)
    case .failure(let error): reading = StatusReading(error)
    }
    switch reading {
    case .passcodeSet(let status): StatusCache.write(status)
    case .unknown: break
    case .noPasscode, .storeRefused, .gatekeeperUnavailable: StatusCache.remove()
    }
    return reading
  }
}
