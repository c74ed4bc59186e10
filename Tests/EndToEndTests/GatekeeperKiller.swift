import Foundation
import Testing

/// The user's own program that kills every gatekeeper as it starts
/// (Tests/Faults/kill_gatekeepers.py), aimed at a gatekeeper started under a
/// name of one test's own (the kernel names a process after the path it was
/// started by), so that other tests' gatekeepers are left alone.
final class GatekeeperKiller {
  static let script = WaylandEndToEndTests.root.appendingPathComponent("Tests/Faults/kill_gatekeepers.py").path

  let name = "plg-" + String(UUID().uuidString.prefix(8)).lowercased()
  private let directory: String
  private var pid: pid_t = 0

  init(in directory: String) { self.directory = directory }

  deinit { if pid > 0 { kill(pid, SIGKILL) } }

  /// The gatekeeper under this killer's name (set PASSLOCK_AUTH to it).
  var gatekeeper: String {
    let path = directory + "/" + name
    try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: Harness.binDirectory + "/passlock-auth")
    return path
  }

  func start() throws {
    unlink(directory + "/stop-killing")
    // Real-time where it may be (root), so that nothing starves it: a
    // gatekeeper runs a few ms, and one it missed would be a verdict.
    let realTime = getuid() == 0 ? "chrt -f 10 " : ""
    pid = try #require(
      Spawn.start(
        [
          "/bin/sh", "-c",
          "exec \(realTime)/usr/bin/python3 \(Self.script) --name \(name) --seconds 60 "
            + "--stop-file \(directory)/stop-killing >\(directory)/killed",
        ],
        environment: ["PATH": "/usr/bin:/bin"]))
    usleep(200_000)  // its first scan
  }

  /// Ends it; how many it killed.
  func stop() -> Int {
    FileManager.default.createFile(atPath: directory + "/stop-killing", contents: Data())
    _ = Spawn.wait(pid, seconds: 10)
    pid = 0
    let text = (try? String(contentsOfFile: directory + "/killed", encoding: .utf8)) ?? ""
    return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  }
}
