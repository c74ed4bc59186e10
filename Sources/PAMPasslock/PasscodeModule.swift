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
// While "password first" (the root-held configuration beside helper=) asks
// for the account password, it says so and steps aside; a root host that
// then establishes credentials with the account password as its token
// records that use (pam_sm_setcred).

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

// Called once the host's stack authenticated (login, su, a display manager,
// as root): where password first still asks for the account password and
// the token the stack took is that password, its use is recorded. Whatever
// happens here, the answer is success: credentials are not ours to refuse.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(
  _ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
  guard flags & PAMCode.deleteCredentials == 0, let pam = PAMModuleHandle(pamh) else { return PAMCode.success }
  var arguments: [String] = []
  for i in 0..<Int(max(argc, 0)) { if let arg = argv?[i] { arguments.append(String(cString: arg)) } }
  guard case .success(let options) = PAMModuleOptions.parse(arguments) else { return PAMCode.success }
  PasscodeModule(pam: pam, options: options).recordAccountPassword()
  return PAMCode.success
}

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
    // A token kept by an earlier authentication in this handle (sudo
    // retries) is wiped first: setcred must judge only this one's.
    pam.forget(Self.typedTokenData)
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
    return geteuid() == 0 ? verifyDirectly(target) : verifyThroughHelper(target.name)
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
  /// `keeping`: such a token is kept for setcred (a root host under
  /// password first: it may be the account password).
  func passcode(into secret: inout Secret, keeping: Bool = false) -> Int32? {
    let rc = pam.authToken(prompt: "Passcode: ", into: &secret)
    guard rc == PAMCode.success else { return rc }
    let valid = secret.withBytes { PasscodePolicy.check($0, allowSimple: true) } == nil
    if !valid && keeping { pam.keep(secret, as: Self.typedTokenData) }
    return valid ? nil : PAMCode.unavailable
  }

  /// pam_set_data's name for the token kept for setcred: PAM wipes
  /// PAM_AUTHTOK when pam_authenticate returns, before any setcred.
  static let typedTokenData = "passlock_typed_token"

  /// Password first: says why (not an error), asks for the password here (as
  /// the passcode prompt would have: the next module takes it through
  /// try_first_pass), keeps it for a root host's setcred and steps aside. A
  /// conversation that failed or was aborted says so.
  func askForThePassword(_ why: PasswordFirst) -> Int32 {
    pam.tell(why.sentence, style: .info)
    var token = Secret()
    let rc = pam.authToken(prompt: "Password: ", into: &token)
    guard rc == PAMCode.success else { return rc == PAMCode.authError ? PAMCode.unavailable : rc }
    if geteuid() == 0 { pam.keep(token, as: Self.typedTokenData) }
    return PAMCode.unavailable
  }

  // MARK: Root host: the store itself

  /// The root-held configuration (password first, passcode only while
  /// locked); nil (the passcode not offered) when that file is refused or
  /// malformed, or when `helper=` names no root-owned gatekeeper: the file
  /// beside it would not be the one the gatekeeper and the lock screens obey
  /// (a prefix of its own, a /usr/local install whose PAM line left helper= out).
  func rootConfig() -> Config? {
    var st = stat()
    guard stat(options.helper, &st) == 0, st.st_uid == 0, st.st_mode & S_IFMT == S_IFREG else {
      pam.log(LOG_ERR, "\(options.helper) is not a gatekeeper installed by root: pass helper= with its path")
      return nil
    }
    do throws(RootConfigError) {
      return try RootConfig.load(RootConfig.path(besides: options.helper))
    } catch {
      pam.log(LOG_ERR, "\(error)")
      return nil
    }
  }

  func location(_ user: String) -> StoreLocation? {
    guard !user.contains("/"), user != ".", user != ".." else { return nil }
    return StoreLocation(kind: .system, directory: options.storeDirectory + "/" + user, owner: 0)
  }

  /// Password first before passcode only while locked: the first login
  /// after boot at a display manager is the password's use it waits for.
  func verifyDirectly(_ account: Account) -> Int32 {
    let user = account.name
    guard let location = location(user) else { return PAMCode.userUnknown }
    guard let config = rootConfig() else { return PAMCode.unavailable }
    let policy = PasswordFirstPolicy(config)
    do {
      guard let store = try PasscodeStore(location, create: false), try store.passcode() != nil else {
        debug("no passcode for \(user)")
        return PAMCode.unavailable
      }
      let status = try store.status(now: wallClockSeconds(), user: user, passwordFirst: policy)
      if let why = status.passwordFirst { return askForThePassword(why) }
      let service = pam.item(PAMModuleHandle.serviceItem)
      let onlyWhileLocked = config.bool("Authentication.PasscodeOnlyWhileLocked")
      guard
        DisplayManagerStack.allows(
          service: service, onlyWhileLocked: onlyWhileLocked, anyLocked: { LockedSessions.anyLocked(uid: account.uid) })
      else {
        debug("\(user): \(service ?? "") is a display manager's stack and no session of the user's is locked")
        return PAMCode.unavailable
      }
      if let refusal = refusalBeforePrompt(status) { return refusal }
      var secret = Secret()
      if let rc = passcode(into: &secret, keeping: policy.everyHours > 0) { return rc }
      return code(for: try store.verify(secret, now: wallClockSeconds(), passwordFirst: policy))
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
    if let why = status.passwordFirst { return askForThePassword(why) }
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
    case .passwordFirst(let why):
      // Already prompted: the token is the next module's to try.
      pam.tell(why.sentence, style: .info)
      return PAMCode.unavailable
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

  // MARK: Password first: the account password's use, seen by a root host

  /// Records the account password's use when password first needs it and
  /// the stack's token is that password (checked against the shadow entry:
  /// that the stack succeeded says nothing about which module let it).
  /// Under PasswordEveryHours every use counts (the hours run from the last
  /// one); under PasswordAfterBoot alone only the first after boot is
  /// checked, so that a login or sudo costs no hash otherwise.
  func recordAccountPassword() {
    // The kept token (only a root host under password first keeps one) is
    // read and wiped at once, whatever follows.
    var token = Secret()
    let kept = pam.kept(Self.typedTokenData, into: &token)
    pam.forget(Self.typedTokenData)
    guard kept, geteuid() == 0, let user = pam.item(PAMModuleHandle.userItem), let location = location(user) else { return }
    guard let policy = rootConfig().map(PasswordFirstPolicy.init), !policy.isOff else { return }
    do {
      guard let store = try PasscodeStore(location, create: false), try store.passcode() != nil else { return }
      let asking = try store.status(now: wallClockSeconds(), user: user, passwordFirst: policy).passwordFirst != nil
      guard asking || policy.everyHours > 0 else { return }
      guard ShadowPassword.matches(user: user, token) else {
        debug("\(user): the stack's token is not the account password; password first still stands")
        return
      }
      try store.recordAccountPassword()
      debug("\(user): the account password was used; the passcode works from now on")
    } catch {
      pam.log(LOG_WARNING, "passcode store: the account password's use is not recorded: \(error)")
    }
  }
}
