import Glibc
import PasslockCore
import PasslockPOSIX
import PasslockStore

/// The operations of the gatekeeper, each turning a request into one result.
struct Gatekeeper {
  let mode: Mode
  let channel: FrameChannel

  func handle(_ request: borrowing Request) -> AuthResult {
    do throws(StoreError) {
      switch request.operation {
      case .status:
        guard let store = try open(create: false) else { return AuthResult(.ok, try emptyStatus().fields) }
        var status = try wrap { () throws(StoreFileError) in
          try store.status(now: wallClockSeconds(), user: mode.user.name, passwordFirst: mode.passwordFirst)
        }
        if status.externalRefusal.isEmpty && !externalServiceExists() {
          status.externalRefusal = "no \(ExternalAuthenticator.service) PAM service"
        }
        return AuthResult(.ok, status.fields)
      case .verify:
        guard let store = try open(create: false) else { return AuthResult(.noPasscode) }
        return try store.verify(request.first, now: wallClockSeconds(), passwordFirst: mode.passwordFirst).result
      case .set:
        return try set(request)
      case .change, .remove:
        return try changeOrRemove(request)
      case .external:
        guard let store = try open(create: false), try passcodeExists(store) else { return AuthResult(.noPasscode) }
        return try ExternalAuthenticator.run(mode: mode, channel: channel, store: store)
      case .accountPassword:
        // PAM's verdict is the unlock, whatever the store can do: no
        // passcode, a refused, busy, full or read-only store (the lock
        // screen then asks for the password) must not keep it from
        // unlocking. The counter starts again where the store can say so
        // (a busy one once it is free: clearAttempts); elsewhere it keeps
        // what it counted, never less.
        let accepted: AccountPassword.Accepted
        switch accountPassword() {
        case .success(let outcome): accepted = outcome
        case .failure(let refusal): return refusal.result
        }
        do {
          guard let store = try open(create: false), try passcodeExists(store) else { return AuthResult(.ok) }
          let clearing = try store.clearAttempts(passwordUsed: accepted.passwordUsed)
          return AuthResult(.ok, clearing == .deferred ? ["counter_cleared": "later"] : [:])
        } catch {
          return AuthResult(.ok, ["counter_cleared": "no", "message": error.description])
        }
      }
    } catch {
      return Self.failure(error)
    }
  }

  /// A store error as its result: busy (nothing checked, try again),
  /// unable to record (full, read-only: the account password), or refused.
  static func failure(_ error: StoreError) -> AuthResult {
    if PasscodeStore.isBusy(error) { return AuthResult(.storeBusy, message: error.description) }
    if let reason = error.unwritable {
      return AuthResult(
        .storeUnwritable,
        [
          UnwritableStore.field: reason.rawValue,
          "message": "cannot record the attempt (\(error)); nothing was checked. Free some space "
            + "or make the store writable, or use the account password ('passlock reset')",
        ])
    }
    return AuthResult(.storeError, message: error.description)
  }

  private func set(_ request: borrowing Request) throws(StoreError) -> AuthResult {
    if let refusal = policyRefusal(request.first, request.flags) { return refusal }
    guard let store = try open(create: true) else { return AuthResult(.storeError, message: "no store") }
    if try passcodeExists(store) { return AuthResult(.alreadySet) }
    var passwordUsed = false
    if mode.setNeedsAccountPassword {
      switch accountPassword() {
      case .success(let accepted): passwordUsed = accepted.passwordUsed
      case .failure(let refusal): return refusal.result
      }
    }
    try store.setPasscode(request.first, accountPasswordUsed: passwordUsed)
    return AuthResult(.ok)
  }

  /// `change` carries [current,] new; `remove` carries [current]. Without the
  /// current passcode, the account password stands in for it.
  private func changeOrRemove(_ request: borrowing Request) throws(StoreError) -> AuthResult {
    let isChange = request.operation == .change
    let hasCurrent = request.secretCount == (isChange ? 2 : 1)
    guard let store = try open(create: false), try passcodeExists(store) else { return AuthResult(.noPasscode) }
    if isChange {
      let refusal = hasCurrent ? policyRefusal(request.second, request.flags) : policyRefusal(request.first, request.flags)
      if let refusal { return refusal }
    }
    var passwordUsed = false
    if hasCurrent {
      let verdict = try store.verify(request.first, now: wallClockSeconds(), passwordFirst: mode.passwordFirst)
      guard verdict == .accepted else { return verdict.result }
    } else {
      switch accountPassword() {
      case .success(let accepted): passwordUsed = accepted.passwordUsed
      case .failure(let refusal): return refusal.result
      }
    }
    if isChange {
      if hasCurrent {
        try store.setPasscode(request.second)
      } else {
        try store.setPasscode(request.first, accountPasswordUsed: passwordUsed)
      }
    } else {
      try store.removePasscode()
    }
    return AuthResult(.ok)
  }

  /// The external authenticator is offered only where its PAM service exists.
  private func externalServiceExists() -> Bool {
    let directories = mode.pamConfigDirectory.map { [$0] } ?? ["/etc/pam.d", "/usr/lib/pam.d"]
    return directories.contains { access($0 + "/" + ExternalAuthenticator.service, F_OK) == 0 }
  }

  private func policyRefusal(_ passcode: borrowing Secret, _ flags: AuthProtocol.Flags) -> AuthResult? {
    let violation = passcode.withBytes { PasscodePolicy.check($0, allowSimple: flags.contains(.allowSimple)) }
    return violation.map { AuthResult(.rejected, message: $0.description) }
  }

  /// PAM's verdict on the account password; refused, the result to return.
  private func accountPassword() -> Result<AccountPassword.Accepted, Refused> {
    AccountPassword.check(mode: mode, channel: channel).mapError {
      Refused(result: AuthResult(.accountPasswordFailed, message: $0.description))
    }
  }

  struct Refused: Error {
    let result: AuthResult
  }

  private func open(create: Bool) throws(StoreError) -> PasscodeStore? {
    do { return try PasscodeStore(mode.location, create: create, hashCost: mode.hashCost) } catch { throw .file(error) }
  }

  private func passcodeExists(_ store: borrowing PasscodeStore) throws(StoreError) -> Bool {
    try wrap { () throws(StoreFileError) in try store.passcode() } != nil
  }

  private func emptyStatus() throws(StoreError) -> StoreStatus {
    StoreStatus(
      passcodeSet: false, length: 0, failedAttempts: 0, retryAfterSeconds: 0, accountPasswordRequired: false,
      store: mode.location.kind, directory: mode.location.directory, user: mode.user.name)
  }

  private func wrap<T>(_ body: () throws(StoreFileError) -> T) throws(StoreError) -> T {
    do { return try body() } catch { throw .file(error) }
  }
}
