/// Why a `passlock` command did not succeed, as data: `message` is the one
/// place its wording lives and `exitStatus` the documented status it ends
/// with (passlock(1), EXIT STATUS). Commands throw these; `main` prints
/// "Error: <message>" and exits with the status.
public enum CommandFailure: Error, Equatable, Sendable {
  // 2: the request cannot be done as asked.
  case noPasscode
  case alreadySet
  /// The new passcode breaks the policy (its words), or the two entries differ.
  case passcodeRefused(String)
  case nothingEntered
  case accountPasswordRejected(String?)
  case externalFailed(String?)
  case terminalGone
  case daemonNotRunning
  case daemonRefused(String)
  /// Anything else the user can fix, in words that say how.
  case refused(String)
  // 3: the compositor refused the Wayland lock: another lock screen holds it.
  case lockHeldElsewhere
  // 69: no lock in the Wayland session: the compositor lacks
  // ext-session-lock-v1, or passlock-wayland is not installed (its words).
  case noSessionLock(String)
  // 70: the gatekeeper could not run, or broke its protocol.
  case gatekeeper(String)
  // 73: another process holds the store (past the deadline); try again.
  case storeBusy(String)
  // 74: the store cannot be used as it is (world-readable, corrupt…); the
  // gatekeeper's message says how to fix it.
  case store(String)
  // 75: a delay from earlier failures is running.
  case delayed(retryAfterSeconds: Int64)
  // 77: only the account password opens it now.
  case accountPasswordRequired(reason: String?)
  // 77 too: "password first" asks for the account password before the passcode.
  case passwordFirst(PasswordFirst)
  // 78: a config file is wrong (file:line).
  case config(String)
  // 130: interrupted (Ctrl-C at a prompt).
  case interrupted

  /// The one "too many failures" sentence, for the CLI and the PAM module.
  public static func tooManyFailures(retryAfterSeconds: Int64?) -> String {
    guard let seconds = retryAfterSeconds else { return "Too many failed passcode attempts; the account password is required." }
    return "Too many failed passcode attempts; try again in \(TimeText.clock(seconds))."
  }

  public var message: String {
    switch self {
    case .noPasscode: return "No passcode is set; run 'passlock set' first."
    case .alreadySet: return "A passcode is already set; use 'passlock change' to change it."
    case .passcodeRefused(let why): return "Passcode refused: \(why)."
    case .nothingEntered: return "No passcode was entered."
    case .accountPasswordRejected(let why): return "The account password was not accepted (\(why ?? "PAM refused"))."
    case .externalFailed(let why): return why ?? "the external authenticator failed"
    case .terminalGone: return "The terminal went away; nothing was changed."
    case .daemonNotRunning: return "passlockd is not running; start it with 'systemctl --user start passlockd'."
    case .daemonRefused(let answer): return "passlockd: \(answer)"
    case .refused(let text), .gatekeeper(let text), .store(let text), .config(let text), .storeBusy(let text): return text
    case .delayed(let seconds): return Self.tooManyFailures(retryAfterSeconds: seconds)
    case .accountPasswordRequired(let reason):
      let why = reason.map { " (\($0))" } ?? ""
      return "Too many failed passcode attempts\(why); the account password is required: run 'passlock reset'."
    case .passwordFirst(let why): return why.sentence + " Run 'passlock reset': it asks for the password."
    case .interrupted: return "Interrupted."
    case .lockHeldElsewhere:
      return "The compositor refused the lock: another lock screen (swaylock, hyprlock…) holds it; nothing was locked by passlock."
    case .noSessionLock(let text): return text
    }
  }

  public var exitStatus: Int32 {
    switch self {
    case .noPasscode, .alreadySet, .passcodeRefused, .nothingEntered, .accountPasswordRejected, .externalFailed,
      .terminalGone, .daemonNotRunning, .daemonRefused, .refused:
      return 2
    case .lockHeldElsewhere: return WaylandLockExit.heldElsewhere.rawValue
    case .noSessionLock: return WaylandLockExit.noSessionLock.rawValue
    case .gatekeeper: return 70
    case .storeBusy: return 73
    case .store: return 74
    case .delayed: return 75
    case .accountPasswordRequired, .passwordFirst: return 77
    case .config: return 78
    case .interrupted: return 130
    }
  }

  /// A gatekeeper answer that is not the one asked for, as the failure it means.
  public init(_ code: AuthProtocol.ResultCode, message: String?) {
    switch code {
    case .noPasscode: self = .noPasscode
    case .alreadySet: self = .alreadySet
    case .rejected: self = .passcodeRefused(message ?? "not allowed")
    case .accountPasswordFailed: self = .accountPasswordRejected(message)
    case .externalUnavailable, .externalFailed, .externalDisabled: self = .externalFailed(message)
    // A gatekeeper that cannot work here says what to fix, as a refused store does.
    case .storeError, .gatekeeperUnavailable: self = .store(message ?? "the passcode store cannot be used")
    case .storeBusy: self = .storeBusy(message ?? "the passcode store is busy; try again")
    case .storeUnwritable: self = .store(message ?? "the passcode store cannot record the attempt")
    case .ok, .mismatch, .delayed, .accountPasswordRequired, .protocolError:
      self = .gatekeeper(message ?? "passlock-auth failed (\(code))")
    }
  }
}
