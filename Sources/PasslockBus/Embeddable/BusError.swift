/// A failed bus call or a message that breaks the protocol: the call, its
/// negative errno, D-Bus's error name, and what went wrong. Standard library
/// only, like the message reader and writer (BusMessageReader.swift), so the
/// format code compiles (and is fuzzed) without the socket code.
public struct BusError: Error, CustomStringConvertible {
  public var call: String
  public var code: Int32
  public var name: String?
  public var message: String?

  public init(call: String, code: Int32, name: String? = nil, message: String? = nil) {
    self.call = call
    self.code = code
    self.name = name
    self.message = message
  }

  public var description: String {
    if let name { return "\(call): \(name): \(message ?? "")" }
    if let message { return "\(call): \(message)" }
    return "\(call): error \(-code)"
  }

  /// Linux's EBADMSG and EPROTO, named here without Glibc.
  static let badMessage: Int32 = 74
  static let protocolError: Int32 = 71

  /// A message that is not valid D-Bus: it is dropped.
  static func malformed(_ what: String) -> BusError {
    BusError(call: "read message", code: -badMessage, message: what)
  }
}
