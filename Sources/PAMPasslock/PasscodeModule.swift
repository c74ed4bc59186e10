import Glibc
import PasslockAccounts
import PasslockClient
import PasslockCore
import PasslockPAM
import PasslockPOSIX
import PasslockStore

// pam_passlock.so: lets any PAM client accept the passcode.
//
//   auth sufficient pam_passlock.so [debug] [allow_remote] [try_first_pass|use_first_pass]
//                                   [store_dir=/var/lib/passlock] [helper=/usr/bin/passlock-auth]
//
// PAM_AUTHINFO_UNAVAIL wherever the passcode does not apply (no passcode, a
// remote login, a process of another user asking for it, a token that is
// not a passcode: PasscodeOffer has the rule), so a `sufficient` line falls
// through to the next module. A running delay or a lockout is PAM_MAXTRIES
// with the reason as an error message. A root host reads the system store
// itself; a user process asks passlock-auth, as pam_unix asks unix_chkpwd.

// The C entry points keep PAM's names (pam_modules(3)).
// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_authenticate")
public func pam_sm_authenticate(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
  guard let pam = PAMModuleHandle(pamh) else { return PAMCode.serviceError }
  var arguments: [String] = []
  for i in 0..<Int(max(argc, 0)) { if let arg = argv?[i] { arguments.append(String(cString: arg)) } }
  let options: PAMModuleOptions
  switch PAMModuleOptions.parse(arguments) {
  case .success(let parsed): options = parsed
  case .failure(let error):
    pam.log(LOG_ERR, error.description)
    return PAMCode.serviceError
  }
  return PasscodeModule(pam: pam, options: options).authenticate()
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 { PAMCode.success }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_acct_mgmt")
public func pam_sm_acct_mgmt(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 { PAMCode.ignore }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_open_session")
public func pam_sm_open_session(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 { PAMCode.ignore }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_close_session")
public func pam_sm_close_session(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 { PAMCode.ignore }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_chauthtok")
public func pam_sm_chauthtok(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 { PAMCode.ignore }

/// One authentication: decide whether the passcode applies, ask for it once,
/// verify it against the store's counter and delays.
struct PasscodeModule {
  let pam: PAMModuleHandle
  let options: PAMModuleOptions

  func debug(_ text: @autoclosure () -> String) {
    if options.debug { pam.log(LOG_DEBUG, text()) }
  }

  func authenticate() -> Int32 {
    guard let user = pam.user() else { return PAMCode.userUnknown }
    // Only for the person the passcode belongs to, at this machine
    // (PasscodeOffer says who that is, and why).
    let target = Account.lookup(name: user)
    let offer = PasscodeOffer.decide(
      realUID: getuid(), targetUID: target?.uid, remoteHost: pam.item(PAMModuleHandle.remoteHostItem),
      terminal: pam.item(PAMModuleHandle.terminalItem), origin: Self.origin(of: getuid()), allowRemote: options.allowRemote)
    guard offer == .offer, let target else {
      debug("\(user): \(offer.reason)")
      return offer == .unknownUser ? PAMCode.userUnknown : PAMCode.unavailable
    }
    return geteuid() == 0 ? verifyDirectly(target.name) : verifyThroughHelper(target.name)
  }

  /// Where a host with real uid `uid` runs, as logind tells it: the session
  /// its process is in, or, outside one (a terminal a desktop started runs
  /// in the user manager), whether the user has a local display session;
  /// and whether any of the user's sessions is remote.
  static func origin(of uid: uid_t) -> PasscodeOffer.Origin {
    guard LogindStateFiles.logindRuns else { return .noLogind }
    let all = LogindStateFiles.sessions(of: uid)
    let remoteOpen = all.contains { $0.remote }
    let own = LogindStateFiles.sessionOfThisProcess(uid: uid).flatMap(LogindStateFiles.session).flatMap { $0.uid == uid ? $0 : nil }
    if let own { return .session(remote: own.remote, remoteOpen: remoteOpen) }
    guard !all.isEmpty else { return .noSession }
    let display = LogindStateFiles.displaySession(of: uid)
    return .outsideSessions(localDisplay: display.map { !$0.remote } ?? false, remoteOpen: remoteOpen)
  }

  /// The token, if it can be a passcode at all (a password typed for another
  /// module under try_first_pass is not counted as a wrong passcode).
  func passcode(into secret: inout Secret) -> Int32? {
    let rc = pam.authToken(prompt: "Passcode: ", into: &secret)
    guard rc == PAMCode.success else { return rc }
    let valid = secret.withBytes { PasscodePolicy.check($0, allowSimple: true) } == nil
    return valid ? nil : PAMCode.unavailable
  }

  // MARK: Root host: the store itself

  func verifyDirectly(_ user: String) -> Int32 {
    guard !user.contains("/"), user != ".", user != ".." else { return PAMCode.userUnknown }
    let location = StoreLocation(kind: .system, directory: options.storeDirectory + "/" + user, owner: 0)
    do {
      guard let store = try PasscodeStore(location, create: false), try store.passcode() != nil else {
        debug("no passcode for \(user)")
        return PAMCode.unavailable
      }
      if let refusal = refusalBeforePrompt(try store.status(now: wallClockSeconds(), user: user)) { return refusal }
      var secret = Secret()
      if let rc = passcode(into: &secret) { return rc }
      return code(for: try store.verify(secret, now: wallClockSeconds()))
    } catch let error as StoreError where error.unwritable != nil {
      pam.log(LOG_WARNING, "passcode store: \(error)")
      return code(for: .failed(.storeUnwritable, message: nil))
    } catch let error as StoreError where PasscodeStore.isBusy(error) {
      // Held past its deadline by another process: the password still works.
      pam.log(LOG_WARNING, "passcode store: \(error)")
      return PAMCode.unavailable
    } catch {
      pam.log(LOG_ERR, "passcode store: \(error)")
      return PAMCode.unavailable
    }
  }

  /// A delay or a lockout answers before any prompt: the user is not asked
  /// for something that cannot be checked.
  func refusalBeforePrompt(_ status: StoreStatus) -> Int32? {
    if status.accountPasswordRequired {
      pam.tell(CommandFailure.tooManyFailures(retryAfterSeconds: nil))
      return PAMCode.maxTries
    }
    if status.retryAfterSeconds > 0 {
      pam.tell(CommandFailure.tooManyFailures(retryAfterSeconds: status.retryAfterSeconds))
      return PAMCode.maxTries
    }
    return nil
  }

  func code(for outcome: VerifyOutcome) -> Int32 {
    switch outcome {
    case .accepted: return PAMCode.success
    case .wrong: return PAMCode.authError
    case .delayed(let seconds):
      pam.tell(CommandFailure.tooManyFailures(retryAfterSeconds: seconds))
      return PAMCode.maxTries
    case .accountPasswordRequired:
      pam.tell(CommandFailure.tooManyFailures(retryAfterSeconds: nil))
      return PAMCode.maxTries
    case .failed: return PAMCode.unavailable
    }
  }

  // MARK: User host: ask passlock-auth

  func verifyThroughHelper(_ user: String) -> Int32 {
    // passlock-auth acts for the real uid only: another user's passcode cannot apply here.
    guard let own = Account.real()?.name, own == user else { return PAMCode.unavailable }
    let helper = GatekeeperClient(path: options.helper)
    let statusResult: AuthResult
    do { statusResult = try helper.run(.status) { _, _, _ in false } } catch {
      pam.log(LOG_ERR, "\(error)")
      return PAMCode.unavailable
    }
    guard let status = StoreStatus(statusResult), status.passcodeSet else {
      return PAMCode.unavailable
    }
    if let refusal = refusalBeforePrompt(status) { return refusal }
    var secret = Secret()
    if let rc = passcode(into: &secret) { return rc }
    let result: AuthResult
    do {
      result = try helper.run(
        .verify,
        sendSecrets: { (channel) throws(SystemError) in
          try channel.send(.secret, secret: secret)
        },
        answer: { _, _, _ in false })
    } catch {
      pam.log(LOG_ERR, "\(error)")
      return PAMCode.unavailable
    }
    return code(for: VerifyOutcome(result))
  }

}
