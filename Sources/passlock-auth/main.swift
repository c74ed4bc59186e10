import Glibc
import PasslockCore
import PasslockPOSIX

// passlock-auth: the gatekeeper of the passcode store (the unix_chkpwd model).
// It speaks AuthProtocol on stdin/stdout, acts only for its real uid, and
// exits with the result code it sent.

// The caller's file size limit (with SIGXFSZ ignored) would cut the store's
// records short mid-write: the counter among them.
ResourceLimits.liftFileSizeLimit()
// A client that goes away must not kill us mid-write with SIGPIPE: the write
// fails with EPIPE instead, after the counter was already persisted.
signal(SIGPIPE, SIG_IGN)
// An ignored SIGCHLD survives exec; a PAM module that runs a helper and
// waits for it needs the default.
signal(SIGCHLD, SIG_DFL)

// A caller that dies (a lock screen killed with SIGKILL) takes us with it: a
// stack still waiting for a finger would otherwise keep the caller's terminal,
// the lock VT among them, open until its own timeout, or for ever. What was
// counted is on disk already. (Callers start us from the thread that waits
// for the answer, so that thread's exit is the caller's.)
guard ParentDeath.deliver(SIGKILL, answers: 1) else { exit(Int32(AuthProtocol.ResultCode.protocolError.rawValue)) }

let channel = FrameChannel(input: .standardInput, output: .standardOutput)

if FileDescriptor.standardInput.isTerminal {
  printError("passlock-auth is the passcode gatekeeper used by passlock; it is not run by hand. See 'passlock --help'.\n")
  exit(64)
}

let mode: Mode
do {
  mode = try Mode.detect()
} catch {
  // The client prints the message; the gatekeeper itself stays quiet. Not
  // a store problem: nothing started from here can check anything.
  let result = AuthResult(.gatekeeperUnavailable, message: error.description)
  try? channel.send(.result, result.encoded())
  exit(Int32(result.code.rawValue))
}

let result: AuthResult
do {
  let request = try Request.read(from: channel)
  result = Gatekeeper(mode: mode, channel: channel).handle(request)
} catch {
  result = AuthResult(.protocolError, message: error.description)
}
try? channel.send(.result, result.encoded())
exit(Int32(result.code.rawValue))
