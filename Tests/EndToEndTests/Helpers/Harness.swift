import Foundation
import Testing

/// Runs the built `passlock` and `passlock-auth` binaries in a throwaway store.
final class Harness: @unchecked Sendable {  // used from one test at a time
  static let binDirectory: String = {
    // The test bundle sits beside the products it was built with.
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: url.appendingPathComponent("passlock-auth").path) {
      guard url.path != "/" else { fatalError("passlock-auth not found near \(exe); run 'swift build' first") }
      url.deleteLastPathComponent()
    }
    return url.path
  }()

  let root: String
  /// The account the tests run as, as the gatekeeper names it.
  static let userName = String(cString: getpwuid(getuid())!.pointee.pw_name)
  var stateDirectory: String { root + "/state" }
  var environment: [String: String]

  struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  init(hashCost: Int = 1) {
    root = NSTemporaryDirectory() + "passlock-e2e-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    environment = [
      "PATH": "/usr/bin:/bin", "HOME": root, "PASSLOCK_STATE_DIR": root + "/state",
      "PASSLOCK_HASH_COST": String(hashCost), "LANG": "C",
    ]
    // scripts/test finds (and ends) what a test left running by this mark.
    if let run = ProcessInfo.processInfo.environment["PASSLOCK_TEST_RUN"] { environment["PASSLOCK_TEST_RUN"] = run }
  }

  deinit { try? FileManager.default.removeItem(atPath: root) }

  /// Runs `passlock` with `arguments`, feeding `input` on stdin.
  @discardableResult
  func passlock(_ arguments: String..., input: String = "") -> Output {
    run(Harness.binDirectory + "/passlock", arguments, input: Data(input.utf8))
  }

  func run(_ path: String, _ arguments: [String], input: Data) -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = environment
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try! process.run()
    stdin.fileHandleForWriting.write(input)
    try? stdin.fileHandleForWriting.close()
    let (output, complete) = Self.drain(
      [stdout.fileHandleForReading.fileDescriptor, stderr.fileHandleForReading.fileDescriptor],
      until: Date().addingTimeInterval(Self.commandLimit))
    if !complete {
      Issue.record("\(path) \(arguments) did not finish (or a process it started kept its output open) in \(Int(Self.commandLimit)) s")
      kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    return Output(
      status: process.terminationStatus, stdout: String(decoding: output[0], as: UTF8.self),
      stderr: String(decoding: output[1], as: UTF8.self))
  }

  /// Longer than any one command of a test takes. Past it the command is
  /// killed and the test fails, instead of the whole run hanging on a read.
  static let commandLimit: Double = 120

  /// Reads `descriptors` to end of file, or until `deadline`; what each gave,
  /// and whether all of them ended.
  static func drain(_ descriptors: [Int32], until deadline: Date) -> (data: [Data], complete: Bool) {
    var data = descriptors.map { _ in Data() }
    var open = Array(descriptors.indices)
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !open.isEmpty {
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { return (data, false) }
      var polls = open.map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
      if poll(&polls, nfds_t(polls.count), Int32(min(left, 1) * 1000)) < 0 && errno != EINTR { return (data, false) }
      for (index, polled) in zip(open, polls) where polled.revents != 0 {
        let count = read(descriptors[index], &buffer, buffer.count)
        if count > 0 {
          data[index].append(contentsOf: buffer[0..<count])
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
          open.removeAll { $0 == index }
        }
      }
    }
    return (data, true)
  }

  func file(_ name: String) -> String? {
    try? String(contentsOfFile: stateDirectory + "/" + name, encoding: .utf8)
  }

  func writeFile(_ name: String, _ text: String) {
    FileManager.default.createFile(
      atPath: stateDirectory + "/" + name, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
  }

  /// A PAM service directory whose `passlock` service accepts `password`
  /// for the current user (pam_wrapper's pam_matrix).
  func accountPassword(_ password: String) {
    let pam = root + "/pam.d"
    try! FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    FileManager.default.createFile(atPath: root + "/passdb", contents: Data("\(user):\(password):passlock\n".utf8))
    let module = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so passdb=\(root)/passdb"
    FileManager.default.createFile(
      atPath: pam + "/passlock", contents: Data("auth required \(module)\naccount required \(module)\n".utf8))
    environment["PASSLOCK_PAM_CONFIG_DIR"] = pam
  }
}
