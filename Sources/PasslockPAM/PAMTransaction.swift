import CPAM
import Glibc
import PasslockCore
import PasslockPOSIX

/// One PAM transaction (pam_start … pam_end), owned by this object: `deinit`
/// always ends it. Calls block (failure delays, readers), so callers never run
/// them on a thread that draws.
public final class PAMTransaction {
  /// Answers PAM's messages. For a prompt, fill `answer` and return true; return
  /// false to refuse (PAM_CONV_ERR). Info and error messages ignore `answer`.
  public typealias Conversation = (_ style: AuthProtocol.PromptStyle, _ text: String, _ answer: inout Secret) -> Bool

  private let handle: OpaquePointer
  private let context: Unmanaged<ConversationBox>

  /// pam_start(3), or pam_start_confdir(3) when `configDirectory` is given.
  public init(service: String, user: String, configDirectory: String?, conversation: @escaping Conversation) throws(PAMError) {
    let box = ConversationBox(conversation)
    context = Unmanaged.passRetained(box)
    var conv = pam_conv(conv: passlockConversation, appdata_ptr: context.toOpaque())
    var started: OpaquePointer?
    let rc: Int32
    if let configDirectory {
      rc = pam_start_confdir(service, user, &conv, configDirectory, &started)
    } else {
      rc = pam_start(service, user, &conv, &started)
    }
    guard rc == PAM_SUCCESS, let started else {
      context.release()
      throw PAMError(call: "pam_start", code: rc, text: "could not start PAM service '\(service)'")
    }
    handle = started
  }

  deinit {
    pam_end(handle, PAM_SUCCESS)
    context.release()
  }

  /// PAM_RUSER: who asks (the user themself).
  public func setRequestingUser(_ name: String) { _ = pam_set_item(handle, PAM_RUSER, name) }

  /// PAM_TTY: the terminal the request came from, as pam_access and pam_securetty see it.
  public func setTerminal(_ name: String) { _ = pam_set_item(handle, PAM_TTY, name) }

  /// pam_authenticate then pam_acct_mgmt (which is what resets pam_faillock).
  /// An expired password still counts as verified: the user proved who they
  /// are; the result (true: expired) tells the caller to say so rather than strand them.
  @discardableResult
  public func authenticateAndCheckAccount() throws(PAMError) -> Bool {
    let auth = pam_authenticate(handle, 0)
    guard auth == PAM_SUCCESS else { throw error("pam_authenticate", auth) }
    let account = pam_acct_mgmt(handle, 0)
    if account == PAM_NEW_AUTHTOK_REQD { return true }
    guard account == PAM_SUCCESS else { throw error("pam_acct_mgmt", account) }
    _ = pam_setcred(handle, Int32(PAM_REFRESH_CRED))
    return false
  }

  private func error(_ call: String, _ code: Int32) -> PAMError {
    PAMError(call: call, code: code, text: String(cString: pam_strerror(handle, code)))
  }
}

/// A failed PAM call with its code and PAM's own wording.
public struct PAMError: Error, CustomStringConvertible {
  public var call: String
  public var code: Int32
  public var text: String
  public var description: String { text }
  /// How a failure counts: a wrong answer, a refusal to go on, or "not here".
  public enum Kind: Sendable {
    case wrong
    case maxTries
    case unavailable
    case other
  }

  public var kind: Kind {
    switch code {
    case PAM_AUTH_ERR, PAM_PERM_DENIED, PAM_CRED_INSUFFICIENT: return .wrong
    case PAM_MAXTRIES: return .maxTries
    case PAM_AUTHINFO_UNAVAIL, PAM_USER_UNKNOWN: return .unavailable
    default: return .other
    }
  }
}

/// Holds the Swift conversation for the C callback, which captures nothing.
final class ConversationBox {
  let conversation: PAMTransaction.Conversation
  init(_ conversation: @escaping PAMTransaction.Conversation) { self.conversation = conversation }
}

/// The C conversation function: gets its context through `appdata`, answers
/// every message, tolerates a NULL response pointer for info/error messages,
/// and copies each typed secret exactly once into memory PAM will free.
private func passlockConversation(
  count: Int32, messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
  responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?, appdata: UnsafeMutableRawPointer?
) -> Int32 {
  guard count > 0, count <= PAM_MAX_NUM_MSG, let messages, let appdata else { return PAM_CONV_ERR }
  let box = Unmanaged<ConversationBox>.fromOpaque(appdata).takeUnretainedValue()
  let replies = calloc(Int(count), MemoryLayout<pam_response>.size)?.assumingMemoryBound(to: pam_response.self)
  guard let replies else { return PAM_BUF_ERR }

  func discardReplies() {
    for i in 0..<Int(count) {
      if let text = replies[i].resp {
        explicit_bzero(text, strlen(text))
        free(text)
      }
    }
    free(replies)
  }
  func fail() -> Int32 {
    discardReplies()
    return PAM_CONV_ERR
  }

  for i in 0..<Int(count) {
    guard let message = messages[i]?.pointee else { return fail() }
    let text = message.msg.map { String(cString: $0) } ?? ""
    let style: AuthProtocol.PromptStyle
    switch message.msg_style {
    case PAM_PROMPT_ECHO_OFF: style = .secret
    case PAM_PROMPT_ECHO_ON: style = .visible
    case PAM_ERROR_MSG: style = .error
    case PAM_TEXT_INFO: style = .info
    default: return fail()
    }
    var answer = Secret()
    guard box.conversation(style, text, &answer) else { return fail() }
    if style == .secret || style == .visible {
      let copy = answer.withBytes { bytes -> UnsafeMutablePointer<CChar>? in
        guard let copy = malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
        if bytes.count > 0 { memcpy(copy, bytes.baseAddress!, bytes.count) }
        copy[bytes.count] = 0
        return copy
      }
      guard let copy else { return fail() }
      replies[i].resp = copy
    }
  }
  if let responses {
    responses.pointee = replies
  } else {
    // Some modules pass no response pointer for info messages; nothing to hand back.
    discardReplies()
  }
  return PAM_SUCCESS
}
