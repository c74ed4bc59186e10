import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Runs one request against `passlock-auth` over its stdin/stdout pipes.
public struct GatekeeperClient: Sendable {
  public let path: String

  public init(path: String) { self.path = path }

  /// `PASSLOCK_AUTH` (the client is unprivileged, so its environment may
  /// choose; a setuid caller passes `trustingEnvironment: false` unless its
  /// caller is root), else the `passlock-auth` installed beside this executable.
  public static func locate(trustingEnvironment: Bool = true) -> GatekeeperClient {
    if trustingEnvironment, let path = environment("PASSLOCK_AUTH"), !path.isEmpty { return GatekeeperClient(path: path) }
    return GatekeeperClient(path: Executable.sibling("passlock-auth"))
  }

  /// Sends the request (`sendSecrets` writes its `secret` frames), answers the
  /// gatekeeper's prompts with `answer`, shows its messages, and returns the result.
  public func run(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags = [], terminal: Int32? = nil,
    sendSecrets: (FrameChannel) throws(SystemError) -> Void = { _ in },
    answer: (AuthProtocol.PromptStyle, String, inout Secret) -> Bool
  ) throws(ClientError) -> AuthResult {
    try start(operation, flags: flags, terminal: terminal, sendSecrets: sendSecrets).finish(answer: answer)
  }

  /// Starts a request without waiting for its answer: the lock screen keeps
  /// drawing while the gatekeeper hashes, and polls `pending.output`.
  /// `terminal` is the terminal the user is at (the lock screen's): the
  /// gatekeeper checks it and names it to PAM as PAM_TTY.
  /// `environment`: instead of ours (nil). `asCaller`: a setuid program's
  /// request starts the gatekeeper with our real ids only
  /// (POSIX_SPAWN_RESETIDS), so whatever sits at `path` gets no more than the
  /// caller has; the real gatekeeper is setuid itself and becomes root again.
  public func start(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags = [], terminal: Int32? = nil, environment: [String]? = nil,
    asCaller: Bool = false, sendSecrets: (FrameChannel) throws(SystemError) -> Void = { _ in }
  ) throws(ClientError) -> PendingRequest {
    guard access(path, X_OK) == 0 else { throw .missingGatekeeper(path) }
    let child: ChildProcess
    do {
      child = try ChildProcess.spawn(
        path, arguments: ["passlock-auth"], terminal: terminal, environment: environment, resetIDs: asCaller)
    } catch {
      throw .io(error)
    }
    let pending = PendingRequest(child: child)
    do throws(SystemError) {
      try pending.channel.send(.hello, [AuthProtocol.version, operation.rawValue, flags.rawValue])
      try sendSecrets(pending.channel)
      try pending.channel.send(.end)
    } catch {
      // The gatekeeper may have refused early (setup error) and said why in a result.
      if error.errno != EPIPE {
        pending.abandon()
        throw .io(error)
      }
    }
    return pending
  }
}

/// A request sent to a running `passlock-auth`, its answer still to read.
public struct PendingRequest {
  public let child: ChildProcess
  var channel: FrameChannel { FrameChannel(input: child.output, output: child.input) }
  /// Readable when the gatekeeper has answered (or prompts).
  public var output: FileDescriptor { child.output }

  /// One frame from the gatekeeper.
  public enum Frame {
    case prompt(AuthProtocol.PromptStyle, String)
    case message(AuthProtocol.PromptStyle, String)
    case result(AuthResult)
  }

  /// Reads the next frame (blocks until one arrives).
  public func nextFrame() throws(ClientError) -> Frame {
    do throws(ProtocolError) {
      guard let frame = try channel.receiveHeader() else {
        throw .malformed("passlock-auth ended without a result")
      }
      let payload = try channel.receivePayload(length: frame.length)
      let style = payload.first.flatMap(AuthProtocol.PromptStyle.init(rawValue:)) ?? .info
      let text = String(decoding: payload.dropFirst(), as: UTF8.self)
      switch frame.kind {
      case .result:
        guard let result = AuthResult.decode(payload) else { throw .malformed("bad result") }
        return .result(result)
      case .message: return .message(style, text)
      case .prompt: return .prompt(style, text)
      default: throw .malformed("unexpected frame from passlock-auth")
      }
    } catch {
      throw .protocolFailure(error)
    }
  }

  /// Answers the prompt the gatekeeper is waiting on.
  public func answer(_ secret: borrowing Secret) throws(ClientError) {
    do { try channel.send(.answer, secret: secret) } catch { throw .io(error) }
  }

  /// Reads frames until the result: shows messages on stderr, answers prompts.
  public func finish(answer: (AuthProtocol.PromptStyle, String, inout Secret) -> Bool) throws(ClientError) -> AuthResult {
    defer { abandon() }
    while true {
      switch try nextFrame() {
      case .result(let result): return result
      case .message(_, let text): printError(text + "\n")
      case .prompt(let style, let text):
        var reply = Secret()
        if answer(style, text, &reply) {
          try self.answer(reply)
        } else {
          do { try channel.send(.cancel) } catch { throw .io(error) }
        }
      }
    }
  }

  /// Stops a request still in progress (PAM may be sleeping a failure delay).
  public func cancel() {
    kill(child.pid, SIGKILL)
    abandon()
  }

  /// Closes the pipes and reaps the child.
  public func abandon() {
    child.input.close()
    child.output.close()
    _ = child.wait()
  }
}

extension StatusReading {
  /// A request that got no answer: `unknown`, but for a gatekeeper that is
  /// not there at all, which nothing started from here could ever run.
  public init(_ error: ClientError) {
    if case .missingGatekeeper = error { self = .gatekeeperUnavailable(error.description) } else { self = .unknown(error.briefly) }
  }
}

public enum ClientError: Error, CustomStringConvertible {
  case missingGatekeeper(String)
  case io(SystemError)
  case protocolFailure(ProtocolError)

  public var description: String {
    switch self {
    case .missingGatekeeper(let path):
      return "passlock-auth is missing or not executable at \(path); install it beside passlock or set PASSLOCK_AUTH"
    case .io(let error): return "running passlock-auth: \(error)"
    case .protocolFailure(let error): return error.description
    }
  }

  /// In a few words, for a lock screen's line (its width is a terminal's).
  public var briefly: String {
    switch self {
    case .missingGatekeeper: return "passlock-auth is missing"
    case .io(let error): return String(cString: strerror(error.errno))
    case .protocolFailure: return "passlock-auth stopped"
    }
  }
}
