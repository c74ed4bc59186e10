import Glibc
import PasslockCore
import PasslockPAM
import PasslockPOSIX

/// Runs the `passlock` PAM service (auth + account) for the real user, with
/// its prompts and messages relayed over the pipe to the client.
enum AccountPassword {
  static let service = "passlock"

  /// True when PAM accepted the account password; messages were relayed.
  static func check(mode: Mode, channel: FrameChannel) -> Result<Void, PAMError> {
    let relay: PAMTransaction.Conversation = { style, text, answer in
      PAMConversationRelay.relay(channel, style, text, &answer)
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
      return .success(())
    } catch {
      return .failure(error)
    }
  }
}
