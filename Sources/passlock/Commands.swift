// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// The flows behind each subcommand: what to ask, and in which order. How a
/// failure is worded and which status it exits with is CommandFailure's
/// (PasslockCore); only a wrong passcode exits 1.
struct Commands {
  let gatekeeper = GatekeeperClient.locate()
  let input: PasscodeInput

  func status(json: Bool) throws(CommandFailure) -> Int32 {
    let status = try currentStatus()
    if json {
      let daemon = DaemonClient.request("status-json").map { $0.trimming("\n") }
      printOut(status.json(daemon: daemon?.hasPrefix("{") == true ? daemon : nil) + "\n")
    } else {
      printOut(status.text() + (DaemonClient.request("status") ?? "Daemon: not running\n"))
    }
    return 0
  }

  /// `passlock lock --session`: passlockd asks logind to lock our sessions.
  func lockSessions() throws(CommandFailure) -> Int32 {
    guard let answer = DaemonClient.request("lock") else {
      throw .daemonNotRunning
    }
    guard answer == "ok\n" else { throw .daemonRefused(answer.trimming("\n")) }
    return 0
  }

  func verify() throws(CommandFailure) -> Int32 {
    var passcode = Secret()
    try readOrFail("Passcode: ", &passcode)
    let result = try run(.verify, secrets: passcode)
    return try outcome(result, success: nil)
  }

  func set(allowSimple: Bool) throws(CommandFailure) -> Int32 {
    let status = try currentStatus()
    if status.passcodeSet { throw .alreadySet }
    if usesKeypad { return try setWithKeypad(status, allowSimple: allowSimple) }
    var new = Secret()
    try chooseNew(&new, allowSimple: allowSimple)
    let result = try run(.set, flags: allowSimple ? .allowSimple : [], secrets: new)
    return try outcome(result, success: "Passcode set (\(new.count) digits).")
  }

  /// Without the current passcode (`--forgot`, or after a lockout) the
  /// gatekeeper asks for the account password instead.
  func change(allowSimple: Bool, forgot: Bool) throws(CommandFailure) -> Int32 {
    let status = try currentStatus()
    guard status.passcodeSet else { throw .noPasscode }
    let useCurrent = !status.accountPasswordRequired && !forgot
    if usesKeypad && useCurrent { return try changeWithKeypad(status, allowSimple: allowSimple) }
    var current = Secret()
    var new = Secret()
    if useCurrent {
      try readOrFail("Current passcode: ", &current)
    } else if !forgot {
      input.say(Self.passwordInstead(status))
    }
    try chooseNew(&new, allowSimple: allowSimple)
    let flags: AuthProtocol.Flags = allowSimple ? .allowSimple : []
    let result = useCurrent ? try run(.change, flags: flags, secrets: current, new) : try run(.change, flags: flags, secrets: new)
    return try outcome(result, success: "Passcode changed (\(new.count) digits).")
  }

  func remove(forgot: Bool) throws(CommandFailure) -> Int32 {
    let status = try currentStatus()
    guard status.passcodeSet else { throw .noPasscode }
    var current = Secret()
    if status.accountPasswordRequired || forgot {
      if !forgot { input.say(Self.passwordInstead(status)) }
      return try outcome(try run(.remove), success: "Passcode removed.")
    }
    if usesKeypad { return try removeWithKeypad(status) }
    try readOrFail("Current passcode: ", &current)
    return try outcome(try run(.remove, secrets: current), success: "Passcode removed.")
  }

  func reset() throws(CommandFailure) -> Int32 {
    try outcome(try run(.accountPassword), success: "Failed attempts cleared; the passcode works again.")
  }

  // MARK: Steps

  /// After a lockout (or while password first asks for it), change and
  /// remove ask for the account password instead.
  static func passwordInstead(_ status: StoreStatus) -> String {
    if let why = status.passwordFirst { return why.sentence + " It replaces the current passcode here.\n" }
    return "Too many failed attempts: the account password replaces the current passcode.\n"
  }

  /// The create flow of the originals: enter, confirm; a mismatch says so and
  /// starts again. Interactive entry also starts again after a policy refusal.
  private func chooseNew(_ new: inout Secret, allowSimple: Bool) throws(CommandFailure) {
    var confirmation = Secret()
    while true {
      try readOrFail("New passcode (4-16 digits): ", &new)
      let violation = new.withBytes { PasscodePolicy.check($0, allowSimple: allowSimple) }
      if let violation {
        let hint = violation.isSimplicity ? "; choose another or pass --allow-simple" : ""
        let refusal = CommandFailure.passcodeRefused("\(violation)\(hint)")
        guard input.isInteractive else { throw refusal }
        input.say(refusal.message + "\n")
        continue
      }
      try readOrFail("Confirm the passcode: ", &confirmation)
      if new.withBytes({ confirmation.constantTimeEquals($0) }) { return }
      input.say("Passcodes didn't match. Try again.\n")
    }
  }

  private func readOrFail(_ prompt: String, _ secret: inout Secret) throws(CommandFailure) {
    let entered: Bool
    do throws(InputError) {
      entered = try input.read(prompt: prompt, into: &secret, digitsOnly: true)
    } catch {
      if case .interrupted = error { throw .interrupted }
      throw .refused(error.description)
    }
    guard entered else { throw .nothingEntered }
  }

  func currentStatus() throws(CommandFailure) -> StoreStatus {
    try StoreStatus.answered(by: try run(.status))
  }

  func run(_ operation: AuthProtocol.Operation) throws(CommandFailure) -> AuthResult {
    try request(operation, flags: []) { _ in }
  }

  func run(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags = [], secrets first: borrowing Secret
  ) throws(CommandFailure) -> AuthResult {
    try request(operation, flags: flags) { (channel) throws(SystemError) in try channel.send(.secret, secret: first) }
  }

  func run(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags = [], secrets first: borrowing Secret,
    _ second: borrowing Secret
  ) throws(CommandFailure) -> AuthResult {
    try request(operation, flags: flags) { (channel) throws(SystemError) in
      try channel.send(.secret, secret: first)
      try channel.send(.secret, secret: second)
    }
  }

  /// One gatekeeper request; PAM prompts (the account password) are answered
  /// from the same input as the passcodes.
  private func request(
    _ operation: AuthProtocol.Operation, flags: AuthProtocol.Flags,
    sendSecrets: (FrameChannel) throws(SystemError) -> Void
  ) throws(CommandFailure) -> AuthResult {
    do {
      // On a terminal, that is the one the account password is typed at.
      let terminal: Int32? = FileDescriptor.standardInput.isTerminal ? 0 : nil
      return try gatekeeper.run(operation, flags: flags, terminal: terminal, sendSecrets: sendSecrets) { style, text, answer in
        let prompt = text.hasSuffix(" ") ? text : text + " "
        return (try? input.read(prompt: prompt, into: &answer, digitsOnly: false)) ?? false
      }
    } catch {
      throw .gatekeeper(error.description)
    }
  }

  /// What a gatekeeper answer means for the command: 0 on success, 1 (with
  /// the count) for a wrong passcode; anything else is thrown.
  func outcome(_ result: AuthResult, success: String?) throws(CommandFailure) -> Int32 {
    switch VerifyOutcome(result) {
    case .accepted:
      if let success {
        printOut(success + "\n")
        // A passcode appeared, changed or went: passlockd re-reads the store,
        // and the next lock screen's first frame waits for the gatekeeper.
        StatusCache.remove()
        _ = DaemonClient.request("refresh")
      }
      return 0
    case .wrong(let failures, let retry, let accountPasswordRequired):
      var text = "Passcode didn't match. Failed attempts: \(failures)."
      if retry > 0 { text += " Try again in \(TimeText.clock(retry))." }
      if accountPasswordRequired {
        text += " The passcode is now locked; run 'passlock reset' with your account password."
      }
      printError(text + "\n")
      return 1
    case .delayed(let retry): throw .delayed(retryAfterSeconds: retry)
    case .accountPasswordRequired(let reason): throw .accountPasswordRequired(reason: reason)
    case .passwordFirst(let why): throw .passwordFirst(why)
    case .failed(let code, let message): throw CommandFailure(code, message: message)
    }
  }
}
