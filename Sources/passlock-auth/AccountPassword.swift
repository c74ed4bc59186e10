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
      relayToClient(channel, style, text, &answer)
    }
    do throws(PAMError) {
      let pam = try PAMTransaction(
        service: service, user: mode.user.name, configDirectory: mode.pamConfigDirectory, conversation: relay)
      pam.setRequestingUser(mode.user.name)
      if let terminal = CallerTerminal.name() { pam.setTerminal(terminal) }
      let expired = try pam.authenticateAndCheckAccount()
      if expired {
        tell(channel, "Your account password has expired; change it with 'passwd'.")
      }
      return .success(())
    } catch {
      return .failure(error)
    }
  }

  /// Sends one PAM message to the client; for prompts, reads its answer.
  static func relayToClient(
    _ channel: FrameChannel, _ style: AuthProtocol.PromptStyle, _ text: String, _ answer: inout Secret
  ) -> Bool {
    let payload = [style.rawValue] + Array(text.utf8.prefix(1024))
    do {
      guard style == .secret || style == .visible else {
        try channel.send(.message, payload)
        return true
      }
      try channel.send(.prompt, payload)
      guard let reply = try channel.receiveHeader(), reply.kind == .answer else { return false }
      try channel.receiveSecret(length: reply.length, into: &answer)
      return true
    } catch {
      return false
    }
  }

  static func tell(_ channel: FrameChannel, _ text: String, style: AuthProtocol.PromptStyle = .info) {
    try? channel.send(.message, [style.rawValue] + Array(text.utf8.prefix(1024)))
  }
}
