import Glibc
import PasslockCore
import PasslockPAM
import PasslockPOSIX
import PasslockStore

/// Runs the `passlock` PAM service (auth + account) for the real user, with
/// its prompts and messages relayed over the pipe to the client.
enum AccountPassword {
  static let service = "passlock"

  /// What PAM's verdict shows: accepted, and whether the account password
  /// itself was used (password first records only that).
  struct Accepted {
    var passwordUsed: Bool
  }

  /// Accepted when PAM accepted the stack; messages were relayed.
  ///
  /// The stack is `common-auth`, where pam_passlock, a fingerprint or a
  /// security key may be what let it through: that it succeeded says
  /// nothing about the password. Installed, the password's use is therefore
  /// the secret typed at the last prompt checked against the shadow entry
  /// (as pam_passlock's setcred does in a root host); for the user's own
  /// store (no boundary) the stack's verdict stands for it.
  static func check(mode: Mode, channel: FrameChannel) -> Result<Accepted, PAMError> {
    let typed = TypedSecret()
    let relay: PAMTransaction.Conversation = { style, text, answer in
      let answered = PAMConversationRelay.relay(channel, style, text, &answer)
      if answered && style == .secret { typed.last.replace(with: answer) }
      return answered
    }
    do throws(PAMError) {
      let pam = try PAMTransaction(
        service: service, user: mode.user.name, configDirectory: mode.pamConfigDirectory, conversation: relay)
      pam.setRequestingUser(mode.user.name)
      if let terminal = CallerTerminal.name() { pam.setTerminal(terminal) }
      let expired = try pam.authenticateAndCheckAccount()
      if expired {
        PAMConversationRelay.tell(channel, "Your account password has expired; change it with 'passwd'.")
      }
      let used = mode.location.kind == .system ? ShadowPassword.matches(user: mode.user.name, typed.last) : true
      return .success(Accepted(passwordUsed: used))
    } catch {
      return .failure(error)
    }
  }

  /// The last secret answered in the conversation (wiped with it).
  final class TypedSecret {
    var last = Secret()
  }
}
