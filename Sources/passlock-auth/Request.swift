import PasslockCore
import PasslockPOSIX

/// A client's request as read from the pipe: the operation, its flags and up
/// to two passcodes, held in `Secret`s that are zeroed when the request ends.
struct Request: ~Copyable {
  var operation: AuthProtocol.Operation
  var flags: AuthProtocol.Flags
  var first = Secret()
  var second = Secret()
  var secretCount = 0

  init(operation: AuthProtocol.Operation, flags: AuthProtocol.Flags) {
    self.operation = operation
    self.flags = flags
  }

  /// Reads `hello`, the `secret` frames and `end`.
  static func read(from channel: FrameChannel) throws(ProtocolError) -> Request {
    guard let hello = try channel.receiveHeader(), hello.kind == .hello else { throw .malformed("expected hello") }
    let payload = try channel.receivePayload(length: hello.length)
    guard payload.count == 3, payload[0] == AuthProtocol.version else {
      throw .malformed("unsupported protocol version; passlock and passlock-auth come from different builds")
    }
    guard let operation = AuthProtocol.Operation(rawValue: payload[1]) else { throw .malformed("unknown operation") }
    var request = Request(operation: operation, flags: AuthProtocol.Flags(rawValue: payload[2]))
    while true {
      guard let frame = try channel.receiveHeader() else { throw .malformed("request ended early") }
      switch frame.kind {
      case .end:
        guard operation.secretCount.contains(request.secretCount) else {
          throw .malformed("wrong number of passcodes for \(operation)")
        }
        return request
      case .secret where request.secretCount == 0:
        try channel.receiveSecret(length: frame.length, into: &request.first)
      case .secret where request.secretCount == 1:
        try channel.receiveSecret(length: frame.length, into: &request.second)
      default:
        throw .malformed("unexpected frame in request")
      }
      request.secretCount += 1
    }
  }
}
