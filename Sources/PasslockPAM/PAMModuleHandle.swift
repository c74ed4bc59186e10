import CPAM
import Glibc
import PasslockPOSIX

/// The module side of PAM: the calls `pam_passlock.so` makes on the handle a
/// host passed in. Nothing here traps; failures come back as PAM codes.
public struct PAMModuleHandle {
  let handle: OpaquePointer

  public init?(_ handle: OpaquePointer?) {
    guard let handle else { return nil }
    self.handle = handle
  }

  /// PAM_USER (pam_get_user may prompt for it, as every module's does).
  public func user() -> String? {
    var name: UnsafePointer<CChar>?
    guard pam_get_user(handle, &name, nil) == PAM_SUCCESS, let name, name.pointee != 0 else { return nil }
    return String(cString: name)
  }

  /// A string item such as PAM_RHOST or PAM_SERVICE; nil when unset.
  public func item(_ type: Int32) -> String? {
    var value: UnsafeRawPointer?
    guard pam_get_item(handle, type, &value) == PAM_SUCCESS, let value else { return nil }
    return String(cString: value.assumingMemoryBound(to: CChar.self))
  }

  public static var remoteHostItem: Int32 { PAM_RHOST }
  public static var terminalItem: Int32 { PAM_TTY }

  /// The passcode via pam_get_authtok, which honours use_first_pass,
  /// try_first_pass and use_authtok itself and prompts at most once.
  /// The token is copied into `secret`; PAM keeps (and later wipes) its own copy.
  public func authToken(prompt: String, into secret: inout Secret) -> Int32 {
    var token: UnsafePointer<CChar>?
    let rc = pam_get_authtok(handle, PAM_AUTHTOK, &token, prompt)
    guard rc == PAM_SUCCESS, let token else { return rc == PAM_SUCCESS ? PAM_AUTH_ERR : rc }
    secret.clear()
    var p = token
    while p.pointee != 0 {
      guard secret.append(UInt8(bitPattern: p.pointee)) else { return PAM_AUTH_ERR }
      p += 1
    }
    return PAM_SUCCESS
  }

  /// Shows an error message through the host's conversation (pam_error is variadic).
  public func tell(_ text: String) {
    var conversation: UnsafeRawPointer?
    guard pam_get_item(handle, PAM_CONV, &conversation) == PAM_SUCCESS,
      let conv = conversation?.assumingMemoryBound(to: pam_conv.self).pointee.conv
    else { return }
    text.withCString { cText in
      var message = pam_message(msg_style: PAM_ERROR_MSG, msg: cText)
      withUnsafePointer(to: &message) { messagePointer in
        var messages: UnsafePointer<pam_message>? = messagePointer
        var response: UnsafeMutablePointer<pam_response>?
        let appdata = conversation!.assumingMemoryBound(to: pam_conv.self).pointee.appdata_ptr
        _ = conv(1, &messages, &response, appdata)
        if let response {
          if let text = response.pointee.resp { free(text) }
          free(response)
        }
      }
    }
  }

  /// pam_vsyslog with a fixed format: the message is data, never a format.
  public func log(_ priority: Int32, _ text: String) {
    text.withCString { cText in
      withVaList([cText]) { pam_vsyslog(handle, priority, "%s", $0) }
    }
  }
}

/// PAM's result codes under Swift names, for the module.
public enum PAMCode {
  public static var success: Int32 { PAM_SUCCESS }
  public static var authError: Int32 { PAM_AUTH_ERR }
  public static var unavailable: Int32 { PAM_AUTHINFO_UNAVAIL }
  public static var maxTries: Int32 { PAM_MAXTRIES }
  public static var serviceError: Int32 { PAM_SERVICE_ERR }
  public static var ignore: Int32 { PAM_IGNORE }
  public static var userUnknown: Int32 { PAM_USER_UNKNOWN }
}
