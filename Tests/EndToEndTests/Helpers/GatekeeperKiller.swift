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

  /// The gatekeeper under this killer's name (set PASSLOCK_AUTH to it). As
  /// root the killer runs real-time and kills the gatekeeper itself; without
  /// that priority a busy machine may let a gatekeeper of a few ms finish
  /// unseen (a verdict the test did not mean to allow), so there it is a
  /// script under the name that waits 0.2 s before it becomes the gatekeeper:
  /// what is killed is still the process the lock screen started.
  var gatekeeper: String {
    let path = directory + "/" + name
    let gatekeeper = Harness.binDirectory + "/passlock-auth"
    if getuid() == 0 {
      try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: gatekeeper)
    } else if !FileManager.default.fileExists(atPath: path) {
      let script = "#!/bin/sh\nsleep 0.2\nexec '\(gatekeeper)' \"$@\"\n"
      FileManager.default.createFile(atPath: path, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
    }
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
            + "--stop-file \(directory)/stop-killing --ready-file \(directory)/killing >\(directory)/killed",
        ],
        environment: ["PATH": "/usr/bin:/bin"]))
    #expect(Wait.until(5) { FileManager.default.fileExists(atPath: directory + "/killing") }, "the killer's first scan")
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
