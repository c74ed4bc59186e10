import Foundation
import Testing

/// pam_passlock.so under C hosts: pamtester through pam_wrapper (PAM_WRAPPER=1,
/// a timeout on every run) and pam-cycles, with pam_matrix as the next module.
@Suite(
  .serialized,
  .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pamtester"), "needs pamtester and pam_wrapper (scripts/install-deps)")
)
final class PAMModuleEndToEndTests {
  static let wrapperLibrary = "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so"
  static let moduleDirectory = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
  let h = Harness()
  var services: String { h.root + "/pam.d" }
  var module: String { h.root + "/pam_passlock.so" }
  var storeDirectory: String { h.root + "/store" }
  let user = Harness.userName

  init() throws {
    try FileManager.default.createDirectory(atPath: h.root + "/pam.d", withIntermediateDirectories: true)
    // Installed without the lib prefix, as PAM modules are.
    try FileManager.default.copyItem(atPath: Harness.binDirectory + "/libpam_passlock.so", toPath: module)
    // A root host reads store_dir/<user>; a user host asks the helper, which
    // (not setuid here) reads PASSLOCK_STATE_DIR: the same directory.
    h.environment["PASSLOCK_STATE_DIR"] = storeDirectory + "/" + user
    try "\(user):hunter2:passcode-test\n".write(toFile: h.root + "/passdb", atomically: true, encoding: .utf8)
    service("other", "auth required pam_deny.so\naccount required pam_deny.so\n")
  }

  func service(_ name: String, _ text: String) {
    FileManager.default.createFile(atPath: services + "/" + name, contents: Data(text.utf8))
  }

  func passlockLine(_ control: String = "sufficient", _ arguments: String = "") -> String {
    "auth \(control) \(module) store_dir=\(storeDirectory) helper=\(Harness.binDirectory)/passlock-auth \(arguments)\n"
  }

  var matrixLines: String {
    let matrix = "\(Self.moduleDirectory)/pam_matrix.so passdb=\(h.root)/passdb"
    return "auth required \(matrix)\naccount required \(matrix)\n"
  }

  /// pamtester under pam_wrapper; `input` answers its prompts.
  func pamtester(_ service: String, input: String, environment extra: [String: String] = [:]) -> Harness.Output {
    let saved = h.environment
    defer { h.environment = saved }
    h.environment["LD_PRELOAD"] = Self.wrapperLibrary
    h.environment["PAM_WRAPPER"] = "1"
    h.environment["PAM_WRAPPER_SERVICE_DIR"] = services
    for (key, value) in extra { h.environment[key] = value }
    // As login on a console: a root host (CI) offers the passcode only on a terminal of this machine.
    return h.run(
      "/usr/bin/timeout", ["20", "/usr/bin/pamtester", "-v", "-I", "tty=/dev/tty1", service, user, "authenticate"],
      input: Data(input.utf8))
  }

  func setPasscode(_ code: String = "2580") {
    #expect(h.passlock("set", "--stdin", input: "\(code)\n\(code)\n").status == 0)
  }

  @Test func rightWrongAndFallThrough() {
    service("passcode-test", passlockLine() + matrixLines)
    // No passcode yet: the module steps aside and pam_matrix asks for the password.
    let unset = pamtester("passcode-test", input: "hunter2\n")
    #expect(unset.status == 0, "\(unset.stderr)")
    #expect(!unset.stdout.contains("Passcode:") && !unset.stderr.contains("Passcode:"), "no passcode prompt without a passcode")

    setPasscode()
    let right = pamtester("passcode-test", input: "2580\n")
    #expect(right.status == 0)
    #expect(right.stdout.contains("successfully authenticated"))
    let wrong = pamtester("passcode-test", input: "1111\nnot-the-password\n")
    #expect(wrong.status != 0)
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":1,"), "the same counter as the lock screen")
    // A password typed at the passcode prompt is not a passcode: not counted.
    let password = pamtester("passcode-test", input: "hunter2\nhunter2\n")
    #expect(password.status == 0)
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":1,"))
  }

  @Test func aRunningDelayIsMaxTriesWithTheTimeLeft() throws {
    service("passcode-test", passlockLine("required"))
    setPasscode()
    let deadline = Int(Date().timeIntervalSince1970) + 60
    let attempts = storeDirectory + "/" + user + "/attempts"
    try "passlock-attempts 1\nfailures=5\nretry_after=\(deadline)\nlast_wrong=\n".write(toFile: attempts, atomically: true, encoding: .utf8)
    chmod(attempts, 0o600)
    let delayed = pamtester("passcode-test", input: "2580\n")
    #expect(delayed.status != 0)
    let output = delayed.stdout + delayed.stderr
    #expect(output.contains("Too many failed passcode attempts; try again in "))
    #expect(output.contains("Maximum number of tries exceeded") || output.contains("maximum"), "\(output)")
    #expect(!output.contains("Passcode:"), "no prompt while the delay runs")
  }

  @Test func useFirstPassTakesTheTokenFromTheStack() {
    service(
      "passcode-test", "auth required \(Self.moduleDirectory)/pam_set_items.so\n" + passlockLine("required", "use_first_pass"))
    setPasscode()
    let right = pamtester("passcode-test", input: "", environment: ["PAM_AUTHTOK": "2580"])
    #expect(right.status == 0, "\(right.stderr)")
    let wrong = pamtester("passcode-test", input: "2580\n", environment: ["PAM_AUTHTOK": "1111"])
    #expect(wrong.status != 0, "use_first_pass never prompts, so the 2580 on stdin is not read")
  }

  /// A root host (sshd, over loopback too) offers the passcode only on a
  /// terminal of this machine with no remote host: sshd's PAM_TTY is "ssh".
  @Test(.enabled(if: getuid() == 0, "a root PAM host: needs root"))
  func aRootHostOffersThePasscodeOnlyOnATerminalOfThisMachine() {
    service("passcode-test", passlockLine() + matrixLines)
    setPasscode()
    let saved = h.environment
    defer { h.environment = saved }
    h.environment["LD_PRELOAD"] = Self.wrapperLibrary
    h.environment["PAM_WRAPPER"] = "1"
    h.environment["PAM_WRAPPER_SERVICE_DIR"] = services
    for items in [["-I", "tty=ssh", "-I", "rhost=127.0.0.1"], ["-I", "tty=ssh"], []] {
      let run = h.run(
        "/usr/bin/timeout", ["20", "/usr/bin/pamtester", "-v"] + items + ["passcode-test", user, "authenticate"],
        input: Data("hunter2\n".utf8))
      #expect(run.status == 0, "the password is asked and works: \(run.stderr)")
      #expect(!(run.stdout + run.stderr).contains("Passcode:"), "\(items): no passcode prompt")
    }
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "nothing counted")
  }

  /// Password first: a passcode set without the account password leaves it
  /// unused, so the module says why (an info message), asks for the
  /// password instead of the passcode (kept for setcred) and steps aside; the next module asks for the password; nothing is
  /// counted. Root hosts read the policy from the root-owned file beside
  /// `helper=`, user hosts through the gatekeeper (here not setuid: from
  /// PASSLOCK_SYSTEM_CONFIG_DIR), so both point at one file.
  @Test func passwordFirstStepsAsideSayingWhy() throws {
    let prefix = h.root + "/usr"
    try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: prefix + "/etc/passlock", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: prefix + "/bin/passlock-auth", withDestinationPath: Harness.binDirectory + "/passlock-auth")
    try "[Authentication]\nPasswordAfterBoot=yes\n".write(toFile: prefix + "/etc/passlock/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = prefix + "/etc/passlock"
    service(
      "passcode-test", "auth sufficient \(module) store_dir=\(storeDirectory) helper=\(prefix)/bin/passlock-auth\n" + matrixLines)
    setPasscode()
    let refused = pamtester("passcode-test", input: "2580\n")
    let output = refused.stdout + refused.stderr
    #expect(refused.status != 0, "the passcode went to the password's module: \(output)")
    #expect(output.contains("Enter your password once after a restart"), "\(output)")
    #expect(!output.contains("Passcode:"), "no passcode prompt")
    // Asked here (pam_unix would take it with try_first_pass; pam_matrix asks again).
    let password = pamtester("passcode-test", input: "hunter2\nhunter2\n")
    #expect(password.status == 0, "\(password.stderr)")
    #expect((password.stdout + password.stderr).contains("Password: "), "\(password.stderr)")
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "nothing counted")
  }

  @Test func garbageArgumentsAreAServiceError() {
    service("passcode-test", passlockLine("required", "frobnicate=3"))
    setPasscode()
    let result = pamtester("passcode-test", input: "2580\n")
    #expect(result.status != 0)
    #expect((result.stdout + result.stderr).contains("Error in service module"), "\(result.stderr)")
  }

  @Test func aThousandLoadAuthenticateUnloadCycles() throws {
    service("passcode-test", passlockLine("required"))
    setPasscode()
    let cycles = h.run(Harness.binDirectory + "/pam-cycles", [services, "passcode-test", user, "2580", "1000"], input: Data())
    #expect(cycles.status == 0)
    #expect(cycles.stdout == "1000 0\n")
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"), "needs valgrind"))
  func noDefiniteLeakAcrossLoadAndUnload() throws {
    service("passcode-test", passlockLine("required"))
    setPasscode()
    let run = h.run(
      "/usr/bin/valgrind", ["--leak-check=full", Harness.binDirectory + "/pam-cycles", services, "passcode-test", user, "2580", "20"],
      input: Data())
    #expect(run.stdout == "20 0\n")
    // glibc's own strncmp over-reads in ld.so are not ours; leaks are what we check.
    let clean = run.stderr.contains("definitely lost: 0 bytes") || run.stderr.contains("All heap blocks were freed")
    #expect(clean, "\(run.stderr.split(separator: "\n").suffix(12).joined(separator: "\n"))")
  }

  @Test func theModuleExportsOnlyThePAMEntryPoints() {
    let symbols = h.run("/usr/bin/nm", ["-D", "--defined-only", module], input: Data()).stdout
    let global = symbols.split(separator: "\n").filter { $0.split(separator: " ").count == 3 && $0.split(separator: " ")[1] == "T" }
    #expect(
      global.map { String($0.split(separator: " ")[2]) }.sorted() == [
        "pam_sm_acct_mgmt", "pam_sm_authenticate", "pam_sm_chauthtok", "pam_sm_close_session", "pam_sm_open_session",
        "pam_sm_setcred",
      ])
    let libraries = h.run("/usr/bin/ldd", [module], input: Data()).stdout
    #expect(!libraries.contains("libswiftCore"), "the Swift runtime is linked in statically")
    #expect(!libraries.contains("Foundation"))
  }
}
