// passlock-wayland compiles this file into its own module (Package.swift).
#if !hasFeature(Embedded)
  import PasslockCore
#endif

/// The status an unlock screen's first frame is drawn from, for every lock
/// screen (terminal and Wayland): the one StatusCache kept from the last lock,
/// so the frame need not wait for the gatekeeper; without one, the
/// gatekeeper's own answer, asked at once so that it starts up while the
/// front end prepares everything else (the two run on different cores).
public struct UnlockStatus {
  /// The cached status; the gatekeeper is then asked once the first frame
  /// is up (`LockController.askForStatus`), so it does not compete with it.
  public let cached: StoreStatus?
  private let pending: PendingRequest?

  /// Reads the cache, or starts the gatekeeper's status request.
  public static func begin(gatekeeper: GatekeeperClient) throws(CommandFailure) -> UnlockStatus {
    if let cached = StatusCache.read() { return UnlockStatus(cached: cached, pending: nil) }
    do { return UnlockStatus(cached: nil, pending: try gatekeeper.start(.status)) } catch {
      throw .gatekeeper(error.description)
    }
  }

  /// The status to draw first: the cached one, or the gatekeeper's (waited for).
  public func first() throws(CommandFailure) -> StoreStatus {
    if let cached { return cached }
    let answer: Result<AuthResult, ClientError>
    do { answer = .success(try pending!.finish { _, _, _ in false }) } catch { answer = .failure(error) }
    return try Self.confirm(answer)
  }

  /// The gatekeeper's answer: saved for the next lock screen; with a cached
  /// status drawn, it replaces that before any key is read, and ends the
  /// lock screen if it refuses (the cache is dropped then).
  public static func confirm(_ answer: Result<AuthResult, ClientError>) throws(CommandFailure) -> StoreStatus {
    let result: AuthResult
    do throws(ClientError) { result = try answer.get() } catch {
      StatusCache.remove()
      throw .gatekeeper(error.description)
    }
    let status: StoreStatus
    do throws(CommandFailure) { status = try StoreStatus.answered(by: result) } catch {
      StatusCache.remove()
      throw error
    }
    // Nothing to lock with: say so and leave the screen alone.
    guard status.passcodeSet else {
      StatusCache.remove()
      throw .noPasscode
    }
    StatusCache.write(status)
    return status
  }
}
