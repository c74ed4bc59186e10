// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
#endif

/// Reads and writes `AuthProtocol` frames on a pair of file descriptors.
public struct FrameChannel: Sendable {
  public let input: FileDescriptor
  public let output: FileDescriptor

  public init(input: FileDescriptor, output: FileDescriptor) {
    self.input = input
    self.output = output
  }

  public func send(_ kind: AuthProtocol.FrameKind, _ payload: [UInt8] = []) throws(SystemError) {
    try output.writeAll(AuthProtocol.header(kind, length: payload.count) + payload)
  }

  /// Sends a secret's bytes straight from its buffer (no intermediate copy).
  public func send(_ kind: AuthProtocol.FrameKind, secret: borrowing Secret) throws(SystemError) {
    try output.writeAll(AuthProtocol.header(kind, length: secret.count))
    try secret.withBytes { (bytes) throws(SystemError) in try output.writeAll(bytes) }
  }

  /// Reads the next frame header; nil at end of stream.
  public func receiveHeader() throws(ProtocolError) -> (kind: AuthProtocol.FrameKind, length: Int)? {
    var header = [UInt8](repeating: 0, count: AuthProtocol.headerSize)
    let complete: Bool
    do {
      complete = try header.withUnsafeMutableBytes { b in
        Result { () throws(SystemError) in try input.readExactly(into: b) }
      }.get()
    } catch { throw .io(error) }
    guard complete else { return nil }
    guard let parsed = AuthProtocol.parseHeader(header) else { throw .malformed("bad frame header") }
    return parsed
  }

  /// Reads a non-secret payload of `length` bytes.
  public func receivePayload(length: Int) throws(ProtocolError) -> [UInt8] {
    var payload = [UInt8](repeating: 0, count: length)
    let complete: Bool
    do {
      complete = try payload.withUnsafeMutableBytes { b in
        Result { () throws(SystemError) in try input.readExactly(into: b) }
      }.get()
    } catch { throw .io(error) }
    guard complete else { throw .malformed("truncated frame") }
    return payload
  }

  /// Reads a secret payload of `length` bytes into `secret`.
  public func receiveSecret(length: Int, into secret: inout Secret) throws(ProtocolError) {
    let complete: Bool
    do { complete = try secret.read(from: input, length: length) } catch { throw .io(error) }
    guard complete else { throw .malformed("truncated frame") }
  }
}

/// A broken conversation on the pipe.
public enum ProtocolError: Error, CustomStringConvertible {
  case io(SystemError)
  case malformed(String)

  public var description: String {
    switch self {
    case .io(let error): return "talking to passlock-auth: \(error)"
    case .malformed(let what): return "passlock-auth protocol error: \(what)"
    }
  }
}
