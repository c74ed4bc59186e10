import Foundation

/// logind's public state files (/run/systemd/seats/seat0, /run/systemd/
/// sessions/ID), written by a root test on a machine where no logind runs, so
/// that passlock-vt sees "session ID of uid U on VT N is the active one".
/// Removed again afterwards; never used where a real logind owns them.
final class LogindState {
  static let seat = "/run/systemd/seats/seat0"
  static let sessions = "/run/systemd/sessions"
  /// No real logind here. A seat file without a running systemd-logind is
  /// one a killed test left behind (it made these tests skip silently), so
  /// it does not count.
  static var canFake: Bool { getuid() == 0 && !(FileManager.default.fileExists(atPath: seat) && logindRuns) }

  static var logindRuns: Bool {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
    return pids.contains { (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)) == "systemd-logind\n" }
  }

  private var written: [String] = []

  func activate(session id: String, uid: uid_t, vt: Int32) throws {
    try FileManager.default.createDirectory(atPath: Self.sessions, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: "/run/systemd/seats", withIntermediateDirectories: true)
    try write(Self.sessions + "/" + id, "UID=\(uid)\nUSER=test\nACTIVE=1\nSTATE=active\nTYPE=tty\nCLASS=user\nSEAT=seat0\nVTNR=\(vt)\n")
    try write(Self.seat, "IS_SEAT0=1\nCAN_MULTI_SESSION=1\nCAN_TTY=1\nACTIVE=\(id)\nACTIVE_UID=\(uid)\nSESSIONS=\(id)\n")
  }

  /// Another session on seat0 beside the active one (SESSIONS lists both).
  func add(session id: String, uid: uid_t, vt: Int32, sessionClass: String = "user") throws {
    try write(
      Self.sessions + "/" + id, "UID=\(uid)\nUSER=other\nACTIVE=0\nSTATE=online\nTYPE=tty\nCLASS=\(sessionClass)\nSEAT=seat0\nVTNR=\(vt)\n")
    let seat = try String(contentsOfFile: Self.seat, encoding: .utf8)
    try write(Self.seat, seat.replacingOccurrences(of: "\nSESSIONS=", with: "\nSESSIONS=\(id) "))
  }

  /// As if logind stopped: no seat file.
  func clear() {
    for path in written { unlink(path) }
    written = []
  }

  private func write(_ path: String, _ text: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    chmod(path, 0o644)
    if !written.contains(path) { written.append(path) }
  }

  deinit { clear() }
}
