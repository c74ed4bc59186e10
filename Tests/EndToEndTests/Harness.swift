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
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try! process.run()
    stdin.fileHandleForWriting.write(input)
    try? stdin.fileHandleForWriting.close()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Output(
      status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
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
