import Foundation
import PasslockCore
import Testing

/// The built `passlock` and its setuid helpers as programs: help, usage
/// errors, status of an empty store, corrupt or exposed files refused with
/// the fix, and the setuid programs' hardening (RELRO, no C++ runtime).
@Suite struct CommandLineEndToEndTests {
  @Test func helpAndVersion() {
    let h = Harness()
    let help = h.passlock("--help")
    #expect(help.status == 0)
    #expect(help.stdout == CLI.help(nil))
    #expect(help.stderr == "")
    #expect(h.passlock("help", "verify").stdout == CLI.help(.verify))
    #expect(h.passlock("--version").stdout == "passlock 0.1.0\n")
  }

  /// The setuid programs are PIE with full RELRO: their GOT is read-only
  /// once loaded (GNU_RELRO and BIND_NOW).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"), "needs readelf (binutils)"))
  func theSetuidProgramsHaveFullRELRO() {
    let h = Harness()
    for name in ["passlock-auth", "passlock-vt"] {
      let path = Harness.binDirectory + "/" + name
      let dynamic = h.run("/usr/bin/readelf", ["-d", path], input: Data()).stdout
      let segments = h.run("/usr/bin/readelf", ["-lW", path], input: Data()).stdout
      #expect(dynamic.contains("BIND_NOW"), "\(name): no BIND_NOW")
      #expect(dynamic.contains("PIE"), "\(name): not PIE")
      #expect(segments.contains("GNU_RELRO"), "\(name): no RELRO segment")
      #expect(!dynamic.contains("TEXTREL"), "\(name): relocations in its code")
      // The loader ignores a setuid program's search paths but $ORIGIN; none other is set.
      for line in dynamic.split(separator: "\n") where line.contains("(RPATH)") || line.contains("(RUNPATH)") {
        #expect(line.hasSuffix("[$ORIGIN]"), "\(name): \(line)")
      }
    }
  }

  /// The setuid programs start on the console lock's critical path: the C++
  /// runtime and the unwinder are linked in, not loaded (Package.swift).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"), "needs readelf (binutils)"))
  func theSetuidProgramsLoadNoCxxRuntime() {
    let h = Harness()
    for name in ["passlock-auth", "passlock-vt"] {
      let dynamic = h.run("/usr/bin/readelf", ["-d", Harness.binDirectory + "/" + name], input: Data()).stdout
      #expect(dynamic.contains("(NEEDED)"), "\(name): readelf shows no needed libraries")
      #expect(!dynamic.contains("libstdc++"), "\(name) loads libstdc++")
      #expect(!dynamic.contains("libgcc_s"), "\(name) loads libgcc_s")
    }
    #if PASSLOCK_EMBEDDED
      // Embedded Swift: the console holder needs the C library and nothing else.
      let needed = h.run("/usr/bin/readelf", ["-d", Harness.binDirectory + "/passlock-vt"], input: Data()).stdout
        .split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { $0.split(separator: "[").last?.dropLast() }
      #expect(Set(needed.map(String.init)) == ["libc.so.6", "libm.so.6"], "passlock-vt needs \(needed)")
    #endif
  }

  /// The lock screen's and the daemon's RSS is mostly code: each link puts
  /// what the program runs first (its order file, from
  /// scripts/lock-screen-order and scripts/daemon-order), so that code
  /// shares few pages.
  @Test(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nm"), "needs nm (binutils)"),
    arguments: [("passlock", "Sources/passlock/lock-screen.order"), ("passlockd", "Sources/passlockd/daemon.order")])
  func theCodeAProgramRunsIsLinkedFirst(program: String, orderFile: String) throws {
    let h = Harness()
    let orderPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../" + orderFile).path
    let order = try String(contentsOfFile: orderPath, encoding: .utf8).split(separator: "\n").map(String.init)
    let listing = h.run("/usr/bin/nm", ["-n", "--defined-only", Harness.binDirectory + "/" + program], input: Data()).stdout
    // (Swift 6.0's link lists the linker's empty __preinit_array markers
    // among the code: they are no code.)
    var addresses: [String: UInt64] = [:]
    var codeStart: UInt64?
    for line in listing.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 3, "tTwW".contains(fields[1]), !fields[2].hasPrefix("__preinit_array_"),
        let address = UInt64(fields[0], radix: 16)
      else { continue }
      codeStart = codeStart ?? address
      if addresses[String(fields[2])] == nil { addresses[String(fields[2])] = address }
    }
    let first = Array(order.filter { addresses[$0] != nil }.prefix(10))
    #expect(first.count == 10, "the order file names functions this build does not have")
    // The link orders sections, and a C library object's one section holds
    // several functions: the first ones the file names share the code's
    // first 64 KiB (the fault-around window), not its first ten places.
    let far = first.filter { addresses[$0]! - codeStart! >= 65536 }
    #expect(far.isEmpty, "\(program)'s code does not begin with the order file's functions: \(far)")
  }

  @Test func usageErrorsExit64OnStderr() {
    let h = Harness()
    let result = h.passlock("verify", "--now")
    #expect(result.status == 64)
    #expect(result.stdout == "")
    #expect(
      result.stderr
        == "Error: Unknown option '--now'\nUsage: passlock verify [--stdin]\n  See 'passlock verify --help' for more information.\n")
  }

  @Test func statusOfAnEmptyStore() {
    let h = Harness()
    let json = h.passlock("status", "--json")
    #expect(json.status == 0)
    #expect(
      json.stdout == """
        {"passcode_set":false,"length":0,"failed_attempts":0,"retry_after_seconds":0,"account_password_required":false,\
        "password_first":null,"store":"user","store_directory":"\(h.stateDirectory)","user":"\(Harness.userName)","daemon":null}

        """)
    #expect(
      h.passlock("status").stdout
        == "Passcode: not set\nFailed attempts: 0\nStore: user (not setuid; development mode) \(h.stateDirectory)\nDaemon: not running\n")
    let verify = h.passlock("verify", "--stdin", input: "2580\n")
    #expect(verify.status == 2, "only a wrong passcode exits 1")
    #expect(verify.stderr == "Error: No passcode is set; run 'passlock set' first.\n")
  }

  @Test func setConfirmsAndStartsAgainOnMismatch() {
    let h = Harness()
    let set = h.passlock("set", "--stdin", input: "2580\n2581\n135790\n135790\n")
    #expect(set.status == 0)
    #expect(set.stderr == "Passcodes didn't match. Try again.\n")
    #expect(set.stdout == "Passcode set (6 digits).\n")
    #expect(h.passlock("status", "--json").stdout.contains("\"passcode_set\":true,\"length\":6,"))
    let again = h.passlock("set", "--stdin", input: "4680\n4680\n")
    #expect(again.status == 2)
    #expect(again.stderr == "Error: A passcode is already set; use 'passlock change' to change it.\n")
  }

  @Test func setRefusesSimpleCodesUnlessAllowed() {
    let h = Harness()
    let simple = h.passlock("set", "--stdin", input: "1234\n1234\n")
    #expect(simple.status == 2)
    #expect(
      simple.stderr == "Error: Passcode refused: a run of ascending digits is easy to guess; choose another or pass --allow-simple.\n")
    let short = h.passlock("set", "--stdin", "--allow-simple", input: "12\n12\n")
    #expect(short.stderr == "Error: Passcode refused: a passcode needs at least 4 digits.\n")
    #expect(h.passlock("set", "--stdin", "--allow-simple", input: "1234\n1234\n").status == 0)
    #expect(h.passlock("verify", "--stdin", input: "1234\n").status == 0)
  }

  @Test func verifyExitCodesFollowTheCounter() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0)
    let wrong = h.passlock("verify", "--stdin", input: "1111\n")
    #expect(wrong.status == 1)
    #expect(wrong.stderr == "Passcode didn't match. Failed attempts: 1.\n")
    for code in ["2222", "3333", "4444"] { h.passlock("verify", "--stdin", input: code + "\n") }
    let fifth = h.passlock("verify", "--stdin", input: "5555\n")
    #expect(fifth.status == 1)
    #expect(fifth.stderr.hasPrefix("Passcode didn't match. Failed attempts: 5. Try again in "))
    let delayed = h.passlock("verify", "--stdin", input: "2580\n")
    #expect(delayed.status == 75)
    #expect(
      delayed.stderr.range(of: #"^Error: Too many failed passcode attempts; try again in (1:00|0:5\d)\.\n$"#, options: .regularExpression)
        != nil)
    // Nothing was counted while the delay ran.
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":5,"))
  }

  @Test func theTenthFailureRequiresTheAccountPassword() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    // Nine failures whose delay has already run out (the store's own file).
    h.writeFile("attempts", "passlock-attempts 1\nfailures=9\nretry_after=0\nlast_wrong=\n")
    let tenth = h.passlock("verify", "--stdin", input: "9999\n")
    #expect(tenth.status == 1)
    #expect(
      tenth.stderr
        == "Passcode didn't match. Failed attempts: 10. The passcode is now locked; run 'passlock reset' with your account password.\n")
    let locked = h.passlock("verify", "--stdin", input: "2580\n")
    #expect(locked.status == 77)
    #expect(locked.stderr == "Error: Too many failed passcode attempts; the account password is required: run 'passlock reset'.\n")
    #expect(h.passlock("status", "--json").stdout.contains("\"account_password_required\":true"))

    h.accountPassword("hunter2")
    let badReset = h.passlock("reset", "--stdin", input: "hunter3\n")
    #expect(badReset.status == 2)
    #expect(badReset.stderr == "Error: The account password was not accepted (Authentication failure).\n")
    let reset = h.passlock("reset", "--stdin", input: "hunter2\n")
    #expect(reset.status == 0)
    #expect(reset.stdout == "Failed attempts cleared; the passcode works again.\n")
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0)
  }

  /// passlock, passlockd and passlock-vt word a usage error the same way.
  @Test(arguments: [
    ("passlock", ["verify", "1234"], "Unexpected argument '1234'", "passlock verify [--stdin]", "passlock verify --help"),
    ("passlockd", ["--bogus"], "Unexpected argument '--bogus'", "passlockd", "passlockd --help"),
    (
      "passlock-vt", ["--bogus"], "Unexpected argument '--bogus'", "passlock-vt --vt N [--ready-fd FD] [--grace-ms MS] | --release",
      "passlock-vt --help"
    ),
    // Refused before anything is opened (the console's descriptor would take that number).
    (
      "passlock-vt", ["--vt", "1", "--ready-fd", "987"], "--ready-fd 987 is not an open descriptor",
      "passlock-vt --vt N [--ready-fd FD] [--grace-ms MS] | --release", "passlock-vt --help"
    ),
  ])
  func everyProgramWordsAUsageErrorAlike(_ program: String, _ arguments: [String], _ message: String, _ usage: String, _ help: String) {
    let run = Harness().run(Harness.binDirectory + "/" + program, arguments, input: Data())
    #expect(run.status == 64)
    #expect(run.stderr == "Error: \(message)\nUsage: \(usage)\n  See '\(help)' for more information.\n")
  }

  @Test func changeAndRemove() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let wrong = h.passlock("change", "--stdin", input: "1111\n369258\n369258\n")
    #expect(wrong.status == 1)
    #expect(wrong.stderr == "Passcode didn't match. Failed attempts: 1.\n")
    let change = h.passlock("change", "--stdin", input: "2580\n369258\n369258\n")
    #expect(change.status == 0)
    #expect(change.stdout == "Passcode changed (6 digits).\n")
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 1)
    #expect(h.passlock("verify", "--stdin", input: "369258\n").status == 0)
    #expect(h.passlock("remove", "--stdin", input: "2580\n").status == 1)
    let remove = h.passlock("remove", "--stdin", input: "369258\n")
    #expect(remove.status == 0)
    #expect(remove.stdout == "Passcode removed.\n")
    #expect(h.passlock("status").stdout.hasPrefix("Passcode: not set\n"))
  }

  @Test func changeAfterALockoutTakesTheAccountPassword() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.writeFile("attempts", "passlock-attempts 1\nfailures=10\nretry_after=0\nlast_wrong=\n")
    h.accountPassword("hunter2")
    let change = h.passlock("change", "--stdin", input: "4680\n4680\nhunter2\n")
    #expect(change.status == 0)
    #expect(change.stderr == "Too many failed attempts: the account password replaces the current passcode.\n")
    #expect(h.passlock("verify", "--stdin", input: "4680\n").status == 0)
  }

  @Test func forgotTakesTheAccountPasswordInsteadOfThePasscode() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    let wrong = h.passlock("change", "--forgot", "--stdin", input: "4680\n4680\nhunter3\n")
    #expect(wrong.status == 2, "a wrong account password is not a wrong passcode")
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0, "nothing changed")
    let change = h.passlock("change", "--forgot", "--stdin", input: "4680\n4680\nhunter2\n")
    #expect(change.status == 0)
    #expect(change.stdout == "Passcode changed (4 digits).\n")
    #expect(h.passlock("verify", "--stdin", input: "4680\n").status == 0)
    let remove = h.passlock("remove", "--forgot", "--stdin", input: "hunter2\n")
    #expect(remove.status == 0)
    #expect(h.passlock("status").stdout.hasPrefix("Passcode: not set\n"))
  }

  @Test func corruptFilesAreRefusedWithTheFix() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    chmod(h.stateDirectory + "/passcode", 0o644)
    let result = h.passlock("verify", "--stdin", input: "2580\n")
    #expect(result.status == 74, "a refused store has its own status")
    #expect(
      result.stderr
        == "Error: \(h.stateDirectory)/passcode is readable or writable by others (mode 0644); run 'chmod 0600 \(h.stateDirectory)/passcode'\n"
    )
  }
}

/// The configuration as the programs load it: system then user files in
/// load order, errors naming file:line.
@Suite struct ConfigEndToEndTests {
  @Test func mergesInLoadOrderAndNamesFileAndLineOnErrors() throws {
    let h = Harness()
    let system = h.root + "/etc"
    let user = h.root + "/config"
    try FileManager.default.createDirectory(atPath: system + "/passlock.conf.d", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: user + "/passlock", withIntermediateDirectories: true)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = system
    h.environment["XDG_CONFIG_HOME"] = user
    try "[Appearance]\nDotColor=green\nTitle=System\n".write(toFile: system + "/passlock.conf", atomically: true, encoding: .utf8)
    try "[Appearance]\nTitle=Drop-in\n".write(toFile: system + "/passlock.conf.d/10-title.conf", atomically: true, encoding: .utf8)
    try "[Appearance]\nDotColor=magenta\n".write(toFile: user + "/passlock/passlock.conf", atomically: true, encoding: .utf8)
    let merged = h.passlock("config")
    #expect(merged.status == 0)
    #expect(merged.stdout.contains("\nTitle=Drop-in\n"))
    #expect(merged.stdout.contains("\nDotColor=magenta\n"))

    try "[Appearance]\n\nDotColor=teal\n".write(toFile: user + "/passlock/passlock.conf", atomically: true, encoding: .utf8)
    let broken = h.passlock("config")
    #expect(broken.status == 78)
    #expect(broken.stdout == "")
    #expect(broken.stderr.hasPrefix("Error: \(user)/passlock/passlock.conf:3: DotColor=teal: expected one of: default,"))
  }
}
