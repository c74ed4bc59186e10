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
  public static var serviceItem: Int32 { PAM_SERVICE }
  public static var userItem: Int32 { PAM_USER }

  /// The passcode via pam_get_authtok, which honours use_first_pass,
  /// try_first_pass and use_authtok itself and prompts at most once.
  /// The token is copied into `secret`; PAM keeps (and later wipes) its own copy.
  public func authToken(prompt: String, into secret: inout Secret) -> Int32 {
    var token: UnsafePointer<CChar>?
    let rc = pam_get_authtok(handle, PAM_AUTHTOK, &token, prompt)
    guard rc == PAM_SUCCESS, let token else { return rc == PAM_SUCCESS ? PAM_AUTH_ERR : rc }
    return Self.copy(UnsafeRawPointer(token), into: &secret) ? PAM_SUCCESS : PAM_AUTH_ERR
  }

  /// A NUL-terminated secret of PAM's (or ours) into `secret`; false when it
  /// does not fit.
  static func copy(_ text: UnsafeRawPointer, into secret: inout Secret) -> Bool {
    secret.clear()
    var p = text.assumingMemoryBound(to: UInt8.self)
    while p.pointee != 0 {
      guard secret.append(p.pointee) else { return false }
      p += 1
    }
    return true
  }

  /// Keeps a copy of `secret` in the handle under `name` (pam_set_data)
  /// for a later call of this module; PAM wipes and frees it at pam_end
  /// (or when it is replaced).
  public func keep(_ secret: borrowing Secret, as name: String) {
    let count = secret.count
    guard let copy = calloc(count + 1, 1) else { return }
    secret.withBytes { bytes in
      if let base = bytes.baseAddress { memcpy(copy, base, count) }
    }
    if pam_set_data(handle, name, copy, wipeKeptSecret) != PAM_SUCCESS {
      explicit_bzero(copy, count)
      free(copy)
    }
  }

  /// Wipes and drops what `keep` kept under `name` (libpam runs the
  /// cleanup of the data it replaces).
  public func forget(_ name: String) {
    _ = pam_set_data(handle, name, nil, nil)
  }

  /// What `keep` kept under `name`; false when nothing is.
  public func kept(_ name: String, into secret: inout Secret) -> Bool {
    var data: UnsafeRawPointer?
    guard pam_get_data(handle, name, &data) == PAM_SUCCESS, let data else { return false }
    return Self.copy(data, into: &secret) && secret.count > 0
  }

  public enum MessageStyle { case error, info }

  /// Shows a message through the host's conversation (pam_error and pam_info are variadic).
  public func tell(_ text: String, style: MessageStyle = .error) {
    var conversation: UnsafeRawPointer?
    guard pam_get_item(handle, PAM_CONV, &conversation) == PAM_SUCCESS,
      let conv = conversation?.assumingMemoryBound(to: pam_conv.self).pointee.conv
    else { return }
    text.withCString { cText in
      var message = pam_message(msg_style: style == .error ? PAM_ERROR_MSG : PAM_TEXT_INFO, msg: cText)
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
  public static var deleteCredentials: Int32 { Int32(PAM_DELETE_CRED) }
}

/// pam_set_data's cleanup for `keep`: the copy is wiped before it is freed.
private let wipeKeptSecret: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, data, _ in
  guard let data else { return }
  explicit_bzero(data, strlen(data.assumingMemoryBound(to: CChar.self)))
  free(data)
}
