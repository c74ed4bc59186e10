import Glibc
import PasslockCore
import PasslockPAM
import PasslockPOSIX
import PasslockStore

/// Runs the `passlock-external` PAM service (pam_fprintd, pam_u2f, howdy…)
/// for the real user: messages such as "Place your finger on the reader" are
/// relayed as they arrive; a prompt for a typed secret is refused, since this
/// stack must never ask for one; failures are counted in the store.
enum ExternalAuthenticator {
  static let service = "passlock-external"

  static func run(mode: Mode, channel: FrameChannel, store: borrowing PasscodeStore) throws(StoreError) -> AuthResult {
    if let refusal = store.externalRefusal(now: wallClockSeconds()) {
      return AuthResult(.externalDisabled, message: refusal)
    }
    let relay: PAMTransaction.Conversation = { style, text, _ in
      guard style == .info || style == .error else { return false }  // PAM_CONV_ERR for secret prompts
      AccountPassword.tell(channel, text, style: style)
      return true
    }
    do throws(PAMError) {
      let pam = try PAMTransaction(
        service: service, user: mode.user.name, configDirectory: mode.pamConfigDirectory, conversation: relay)
      pam.setRequestingUser(mode.user.name)
      try pam.authenticateAndCheckAccount()
      return AuthResult(.ok)
    } catch {
      switch error.kind {
      case .unavailable: return AuthResult(.externalUnavailable, message: error.description)
      case .maxTries:
        try store.disableExternal()
        return AuthResult(.externalDisabled, message: error.description)
      case .wrong:
        try store.countExternalFailure()
        return AuthResult(.externalFailed, message: error.description)
      case .other: return AuthResult(.externalUnavailable, message: error.description)
      }
    }
  }
}
