/// The pipe protocol between `passlock` (client) and `passlock-auth` (gatekeeper).
///
/// Every message is a frame: one kind byte, a big-endian 16-bit payload length,
/// then the payload. The client opens with `hello` (protocol version, operation,
/// flags), sends the operation's passcodes as `secret` frames and ends the
/// request with `end`. The gatekeeper may then send `prompt` frames (PAM asking
/// for the account password), each answered by one `answer` or `cancel`, and
/// `message` frames, and closes with exactly one `result`. Secrets travel only
/// in frames on the pipe, never in argv or the environment.
public enum AuthProtocol {
  public static let version: UInt8 = 1
  public static let maxPayload = 4096
  public static let headerSize = 3

  public enum FrameKind: UInt8, Sendable {
    // client → gatekeeper
    case hello = 0x01
    case secret = 0x02
    case end = 0x03
    case answer = 0x04
    case cancel = 0x05
    // gatekeeper → client
    case prompt = 0x11
    case message = 0x12
    case result = 0x13
  }

  public enum Operation: UInt8, CaseIterable, Sendable {
    case status = 1
    case verify = 2
    case set = 3
    case change = 4
    case remove = 5
    /// Run the account password (PAM service `passlock`) and, on success, clear
    /// the attempt counter. The gatekeeper runs PAM itself; nobody can claim it.
    case accountPassword = 6
    /// Run the external authenticator (PAM service `passlock-external`): its
    /// messages are relayed, its secret prompts refused, its failures counted.
    case external = 7

    /// How many `secret` frames the request carries.
    public var secretCount: ClosedRange<Int> {
      switch self {
      case .status, .accountPassword, .external: return 0...0
      case .verify, .set: return 1...1
      // After a lockout, change and remove carry no current passcode and go
      // through the account password instead.
      case .remove: return 0...1
      case .change: return 1...2
      }
    }
  }

  public struct Flags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let allowSimple = Flags(rawValue: 1 << 0)
  }

  /// PAM-style prompt styles, as they travel in `prompt` and `message` frames.
  public enum PromptStyle: UInt8, Sendable {
    case secret = 1
    case visible = 2
    case error = 3
    case info = 4
  }

  /// The outcome of a request; also `passlock-auth`'s exit status.
  public enum ResultCode: UInt8, Sendable {
    case ok = 0
    case mismatch = 1
    case noPasscode = 2
    case alreadySet = 3
    case rejected = 4
    case accountPasswordFailed = 5
    case storeError = 6
    case protocolError = 7
    /// The external stack says it cannot work here (no reader, unknown user).
    case externalUnavailable = 8
    /// The external stack did not recognise the user (counted).
    case externalFailed = 9
    /// The external path is off until the next passcode success (or never offered now).
    case externalDisabled = 10
    /// The store's lock was held past its deadline by another process: nothing was checked or counted.
    case storeBusy = 11
    /// The attempt could not be recorded (a full or read-only file system:
    /// `reason` is an `UnwritableStore`): nothing was checked.
    case storeUnwritable = 12
    /// The gatekeeper cannot work here at all (installed setuid but run
    /// without its privileges, no account for the caller): no lock screen
    /// started from here could unlock anything.
    case gatekeeperUnavailable = 13
    case delayed = 75
    case accountPasswordRequired = 77
  }

  public static func header(_ kind: FrameKind, length: Int) -> [UInt8] {
    precondition(length <= maxPayload, "frame payload too large")
    return [kind.rawValue, UInt8(length >> 8), UInt8(length & 0xff)]
  }

  /// Splits a received header; nil for an unknown kind or an oversized length.
  public static func parseHeader(_ bytes: [UInt8]) -> (kind: FrameKind, length: Int)? {
    guard bytes.count == headerSize, let kind = FrameKind(rawValue: bytes[0]) else { return nil }
    let length = Int(bytes[1]) << 8 | Int(bytes[2])
    return length <= maxPayload ? (kind, length) : nil
  }
}

/// The payload of a `result` frame: a code and `key=value` lines.
public struct AuthResult: Equatable, Sendable {
  public var code: AuthProtocol.ResultCode
  public var fields: [String: String]

  public init(_ code: AuthProtocol.ResultCode, _ fields: [String: String] = [:]) {
    self.code = code
    self.fields = fields
  }

  public init(_ code: AuthProtocol.ResultCode, message: String) {
    self.init(code, ["message": message])
  }

  public var message: String? { fields["message"] }

  public func encoded() -> [UInt8] {
    var text = ""
    for key in fields.keys.sorted() {
      // Values are single lines by construction; a newline would forge a field.
      text += key + "=" + fields[key]!.replacingAll("\n", with: " ") + "\n"
    }
    return [code.rawValue] + Array(text.utf8.prefix(AuthProtocol.maxPayload - 1))
  }

  public static func decode(_ payload: [UInt8]) -> AuthResult? {
    guard let first = payload.first, let code = AuthProtocol.ResultCode(rawValue: first) else { return nil }
    var fields: [String: String] = [:]
    for line in String(decoding: payload.dropFirst(), as: UTF8.self).split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { return nil }
      fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return AuthResult(code, fields)
  }
}
