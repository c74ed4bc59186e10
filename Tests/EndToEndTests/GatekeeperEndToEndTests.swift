import Foundation
import Testing

/// Talks to `passlock-auth` directly, as an attacker or a crash would.
@Suite struct GatekeeperEndToEndTests {
  static func frame(_ kind: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
    [kind, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)] + payload
  }

  static func verifyRequest(_ passcode: String) -> Data {
    Data(frame(0x01, [1, 2, 0]) + frame(0x02, Array(passcode.utf8)) + frame(0x03))
  }

  /// Its caller died before it got going (nobody reads its answers): it does
  /// nothing at all, rather than run a check no one waits for.
  @Test func aGatekeeperWhoseCallerIsGoneDoesNothing() throws {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    try Self.verifyRequest("1111").write(to: URL(fileURLWithPath: h.root + "/request"))
    let request = open(h.root + "/request", O_RDONLY | O_CLOEXEC)
    var answers: [Int32] = [0, 0]
    pipe(&answers)
    close(answers[0])  // the reader is gone
    let pid = try #require(
      Spawn.start(
        [Harness.binDirectory + "/passlock-auth"], environment: h.environment,
        descriptors: [
          (parent: request, child: Int32(0)), (parent: answers[1], child: Int32(1)), (parent: LogindMock.devNull, child: Int32(2)),
        ]))
    close(answers[1])
    close(request)
    #expect(Spawn.wait(pid, seconds: 5) == 7)
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "nothing was checked or counted")
  }

  @Test func garbageIsAProtocolErrorAndCountsNothing() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let result = h.run(Harness.binDirectory + "/passlock-auth", [], input: Data("2580\n".utf8))
    #expect(result.status == 7)
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"))
  }

  @Test func aWrongVersionIsRefused() {
    let h = Harness()
    let request = Data(Self.frame(0x01, [9, 2, 0]) + Self.frame(0x03))
    #expect(h.run(Harness.binDirectory + "/passlock-auth", [], input: request).status == 7)
  }

  /// Starts passlock-auth verifying `passcode` and returns once the attempt
  /// counter on disk reads `failures` (the try is counted, the hash still runs).
  static func startVerify(_ passcode: String, in h: Harness, untilFailures failures: Int) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Harness.binDirectory + "/passlock-auth")
    process.environment = h.environment
    let stdin = Pipe()
    process.standardInput = stdin
    process.standardOutput = Pipe()
    try process.run()
    stdin.fileHandleForWriting.write(verifyRequest(passcode))
    let deadline = Date().addingTimeInterval(10)
    Wait.until(deadline.timeIntervalSinceNow, every: 2_000) { h.file("attempts")?.contains("failures=\(failures)\n") == true }
    // The count is on disk a moment before the store's lock is let go (the
    // directory's fsync comes between): only then is the check in its hash.
    let directory = open(h.stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(directory) }
    Wait.until(deadline.timeIntervalSinceNow, every: 1_000) { flock(directory, LOCK_EX | LOCK_NB) == 0 }
    flock(directory, LOCK_UN)
    return process
  }

  @Test func theCounterSurvivesAKillDuringTheCheck() throws {
    // A slow hash (cost 11 takes about two seconds here) leaves time to kill
    // the gatekeeper after it counted the attempt and before it answered.
    let h = Harness(hashCost: 11)
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let process = try Self.startVerify("1111", in: h, untilFailures: 1)
    #expect(process.isRunning, "the check was still running when the attempt was on disk")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":1,"))
  }

  @Test func aStoppedSameWrongCheckCannotRollBackOtherFailures() throws {
    // The same wrong passcode twice counts once: but a check of it that was
    // stopped mid-hash must not, when continued, erase failures counted meanwhile.
    let h = Harness(hashCost: 10)
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    #expect(h.passlock("verify", "--stdin", input: "1111\n").status == 1)
    let process = try Self.startVerify("1111", in: h, untilFailures: 2)
    kill(process.processIdentifier, SIGSTOP)
    #expect(h.passlock("verify", "--stdin", input: "2222\n").status == 1)
    #expect(h.passlock("verify", "--stdin", input: "3333\n").status == 1)
    kill(process.processIdentifier, SIGCONT)
    process.waitUntilExit()
    // 1111 counted once, 2222 and 3333 once each.
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":3,"), "\(h.file("attempts") ?? "")")
  }
}
