import Glibc
import PasslockCore
import PasslockPOSIX

/// Runs one request against `passlock-auth` over its stdin/stdout pipes.
struct GatekeeperClient {
  let path: String

  /// `PASSLOCK_AUTH` (the client is unprivileged, so its environment may
  /// choose), else the `passlock-auth` installed beside this executable.
  static func locate() -> GatekeeperClient {
    if let path = environment("PASSLOCK_AUTH"), !path.isEmpty { return GatekeeperClient(path: path) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let directory = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
    return GatekeeperClient(path: directory + "/passlock-auth")
  }

  /// Sends the request (`sendSecrets` writes its `secret` frames), answers the
  /// gatekeeper's prompts with `answer`, shows its messages, and returns the result.
  func run(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags = [],
    sendSecrets: (FrameChannel) throws(SystemError) -> Void = { _ in },
    answer: (AuthProtocol.PromptStyle, String, inout Secret) -> Bool
  ) throws(ClientError) -> AuthResult {
    guard access(path, X_OK) == 0 else { throw .missingGatekeeper(path) }
    let child: ChildProcess
    do { child = try ChildProcess.spawn(path, arguments: ["passlock-auth"]) } catch { throw .io(error) }
    defer {
      child.input.close()
      child.output.close()
      _ = child.wait()
    }
    let channel = FrameChannel(input: child.output, output: child.input)
    do throws(SystemError) {
      try channel.send(.hello, [AuthProtocol.version, operation.rawValue, flags.rawValue])
      try sendSecrets(channel)
      try channel.send(.end)
    } catch {
      // The gatekeeper may have refused early (setup error) and said why in a result.
      if error.errno != EPIPE { throw .io(error) }
    }
    do throws(ProtocolError) {
      while let frame = try channel.receiveHeader() {
        switch frame.kind {
        case .result:
          guard let result = AuthResult.decode(try channel.receivePayload(length: frame.length)) else {
            throw .malformed("bad result")
          }
          return result
        case .message:
          let payload = try channel.receivePayload(length: frame.length)
          printError(String(decoding: payload.dropFirst(), as: UTF8.self) + "\n")
        case .prompt:
          let payload = try channel.receivePayload(length: frame.length)
          let style = payload.first.flatMap(AuthProtocol.PromptStyle.init(rawValue:)) ?? .secret
          var reply = Secret()
          if answer(style, String(decoding: payload.dropFirst(), as: UTF8.self), &reply) {
            do { try channel.send(.answer, secret: reply) } catch { throw .io(error) }
          } else {
            do { try channel.send(.cancel) } catch { throw .io(error) }
          }
        default:
          throw .malformed("unexpected frame from passlock-auth")
        }
      }
      throw .malformed("passlock-auth ended without a result")
    } catch {
      throw .protocolFailure(error)
    }
  }
}

enum ClientError: Error, CustomStringConvertible {
  case missingGatekeeper(String)
  case io(SystemError)
  case protocolFailure(ProtocolError)

  var description: String {
    switch self {
    case .missingGatekeeper(let path):
      return "passlock-auth is missing or not executable at \(path); install it beside passlock or set PASSLOCK_AUTH"
    case .io(let error): return "running passlock-auth: \(error)"
    case .protocolFailure(let error): return error.description
    }
  }
}
