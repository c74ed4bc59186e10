import PasslockCore
import PasslockPOSIX

/// The PAM conversation, gatekeeper side: what a PAM module says or asks
/// (pam_unix's "Password: ", pam_fprintd's "Swipe your finger…") travels to
/// the client as `message` and `prompt` frames, and the client's typed answer
/// comes back as an `answer` frame. The whole path, in order:
///   PasslockPAM/PAMTransaction.swift   the C callback PAM calls
///   here                                frames over the pipe
///   PasslockClient/GatekeeperClient.swift  the client's `answer` closure
///   passlock/TerminalLockScreen.swift     the lock screen's password field
enum PAMConversationRelay {
  /// Sends one PAM message to the client; for a prompt, waits for its
  /// answer (an `answer` frame: the typed secret; `cancel`: PAM_CONV_ERR).
  static func relay(
    _ channel: FrameChannel, _ style: AuthProtocol.PromptStyle, _ text: String, _ answer: inout Secret
  ) -> Bool {
    let payload = frame(style, text)
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

  /// A message of our own, shown as PAM's are.
  static func tell(_ channel: FrameChannel, _ text: String, style: AuthProtocol.PromptStyle = .info) {
    try? channel.send(.message, frame(style, text))
  }

  /// A `message` or `prompt` payload: the style, then at most 1 KiB of text.
  static func frame(_ style: AuthProtocol.PromptStyle, _ text: String) -> [UInt8] {
    [style.rawValue] + Array(text.utf8.prefix(1024))
  }
}
