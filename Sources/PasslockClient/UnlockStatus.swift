// passlock-wayland compiles this file into its own module (Package.swift).
#if !hasFeature(Embedded)
  import PasslockCore
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

  /// Reads the cache, or starts the gatekeeper's status request.
  public static func begin(gatekeeper: GatekeeperClient) throws(CommandFailure) -> UnlockStatus {
    if let cached = StatusCache.read() { return UnlockStatus(cached: cached, pending: nil, startFailure: nil) }
    do { return UnlockStatus(cached: nil, pending: try gatekeeper.start(.status), startFailure: nil) } catch {
      // Nothing at that path: no lock screen could ever be unlocked.
      if case .missingGatekeeper = error { throw .gatekeeper(error.description) }
      return UnlockStatus(cached: nil, pending: nil, startFailure: error.briefly)
    }
  }

  /// What to draw the first frame from: the cached status, or the
  /// gatekeeper's reading (waited for). Throws only where nothing may be
  /// locked: no passcode, or a gatekeeper that cannot work here.
  public func first() throws(CommandFailure) -> StatusReading {
    if let cached { return .passcodeSet(cached) }
    let reading: StatusReading
    if let pending {
      let answer: Result<AuthResult, ClientError>
      do { answer = .success(try pending.finish { _, _, _ in false }) } catch { answer = .failure(error) }
      reading = Self.read(answer)
    } else {
      reading = .unknown(startFailure ?? "passlock-auth did not start")
    }
    switch reading {
    case .noPasscode: throw .noPasscode
    case .gatekeeperUnavailable(let why): throw CommandFailure(.gatekeeperUnavailable, message: why)
    case .passcodeSet, .storeRefused, .unknown: return reading
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
    case .failure(let error): reading = .unknown(error.briefly)
    }
    switch reading {
    case .passcodeSet(let status): StatusCache.write(status)
    case .unknown: break
    case .noPasscode, .storeRefused, .gatekeeperUnavailable: StatusCache.remove()
    }
    return reading
  }
}
