import Glibc
import PasslockCore
import PasslockPAM
import PasslockPOSIX
import PasslockStore

/// Runs the `passlock-external` PAM service (pam_fprintd, pam_u2f, howdy…)
/// for the real user: messages such as "Place your finger on the reader" are
/// relayed as they arrive; a prompt for a typed secret is refused, since this
/// stack must never ask for one; failures are counted in the store.
///
/// Counting: an attempt is counted as a failure *before* it runs, written and
/// synced, and given back when it did not fail (success, the stack not
/// available). A stack that retries by itself (pam_fprintd's max-tries)
/// reports each failed scan with "Failed to match fingerprint": that attempt
/// stays counted and the next one is counted before it runs. So 5 bad scans
/// disable the reader whatever max-tries is, and a same-user process that
/// kills this gatekeeper after a failure cannot make it uncounted.
enum ExternalAuthenticator {
  static let service = "passlock-external"

  /// A stack's word for one failed attempt that it will retry itself.
  static func reportsFailedAttempt(_ text: String) -> Bool {
    text.hasPrefix("Failed to match fingerprint")
  }

  static func run(mode: Mode, channel: FrameChannel, store: borrowing PasscodeStore) throws(StoreError) -> AuthResult {
    if let refusal = store.externalRefusal(now: wallClockSeconds(), passwordFirst: mode.passwordFirst) {
      return AuthResult(.externalDisabled, message: refusal)
    }
    try store.countExternalFailure()
    let attempts = AttemptTally()
    let location = mode.location
    let relay: PAMTransaction.Conversation = { style, text, _ in
      guard style == .info || style == .error else { return false }  // PAM_CONV_ERR for secret prompts
      PAMConversationRelay.tell(channel, text, style: style)
      guard reportsFailedAttempt(text) else { return true }
      // That attempt failed and stays counted. At the limit the reader is
      // done, whatever retries the stack has left: say so and end here (the
      // stack's D-Bus client goes with the process, so fprintd lets the
      // reader go). Otherwise the stack retries at once: count that attempt
      // before it runs. A store that cannot be read or written here (a
      // caller's descriptor limit, a full disk) ends it too: never an
      // uncounted retry.
      attempts.failedScans += 1
      var refusal: String?
      do {
        if let store = try PasscodeStore(location, create: false) {
          refusal = store.externalRefusal(now: wallClockSeconds(), passwordFirst: mode.passwordFirst)
          if refusal == nil { try store.countExternalFailure() }
        } else {
          refusal = "the passcode store is gone"
        }
      } catch {
        refusal = "the failure could not be counted: \(error)"
      }
      if let refusal {
        let result = AuthResult(.externalDisabled, message: refusal)
        try? channel.send(.result, result.encoded())
        exit(Int32(result.code.rawValue))
      }
      return true
    }
    do throws(PAMError) {
      let pam = try PAMTransaction(
        service: service, user: mode.user.name, configDirectory: mode.pamConfigDirectory, conversation: relay)
      pam.setRequestingUser(mode.user.name)
      if let terminal = CallerTerminal.name() { pam.setTerminal(terminal) }
      try pam.authenticateAndCheckAccount()
    } catch {
      switch error.kind {
      case .unavailable, .other:
        try store.countExternalFailure(by: -1)  // the attempt under way did not fail
        return AuthResult(.externalUnavailable, message: error.description)
      case .wrong, .maxTries:
        // PAM_MAXTRIES is the stack's own retries running out, not the iOS
        // limit: its failed scans are counted one by one, and after the last
        // one the attempt counted for a retry never ran. At the limit the
        // next start is refused (the key then goes).
        if attempts.failedScans > 0 { try store.countExternalFailure(by: -1) }
        return AuthResult(.externalFailed, message: error.description)
      }
    }
    // Accepted: it unlocks even where the store cannot record the success,
    // full, read-only or busy (the attempt counted before it ran then stays
    // counted: never fewer).
    do throws(StoreError) { try store.externalSucceeded() } catch {
      guard error.unwritable != nil || PasscodeStore.isBusy(error) else { throw error }
    }
    return AuthResult(.ok)
  }
}

/// What the conversation saw (it runs inside PAM's call, on this thread).
final class AttemptTally {
  var failedScans = 0
}
