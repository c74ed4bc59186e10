import Glibc

/// The session on screen, as systemd-logind records it in its public state
/// files (the ones sd_seat_get_active() and sd_session_get_vt() read):
/// /run/systemd/seats/seat0 names the active session, and
/// /run/systemd/sessions/ID its user and VT. Only root can write them.
///
/// passlock-vt locks only for the user whose session that is. A user who made
/// their own VT the active one (VT_ACTIVATE from their console) is not the
/// owner of the seat's active session in logind's eyes, so cannot put their
/// lock screen over somebody else's console. Without logind nothing says whose
/// session is on screen: then only root may lock (as with physlock run by root).
struct ActiveSession: Equatable {
  var id: String
  var uid: uid_t
  var vt: Int32

  static let seatFile = "/run/systemd/seats/seat0"
  static let sessionDirectory = "/run/systemd/sessions"

  enum Lookup: Equatable {
    /// logind does not run (no seat0 state file).
    case noLogind
    /// logind runs but no session is active on seat0.
    case noActiveSession
    case active(ActiveSession)
  }

  static func lookUp() -> Lookup {
    guard let seat = fields(seatFile) else { return .noLogind }
    guard let id = seat["ACTIVE"], let session = session(id) else { return .noActiveSession }
    return .active(session)
  }

  /// Session `id` as logind records it now; nil once it is gone.
  static func session(_ id: String) -> ActiveSession? {
    guard !id.isEmpty, !id.contains("/"), id != ".", id != "..", let session = fields(sessionDirectory + "/" + id),
      let uid = session["UID"].flatMap({ uid_t($0) })
    else { return nil }
    return ActiveSession(id: id, uid: uid, vt: session["VTNR"].flatMap { Int32($0) } ?? 0)
  }

  /// KEY=value lines of a root-owned regular file; nil for anything else.
  static func fields(_ path: String) -> [String: String]? {
    var st = stat()
    guard lstat(path, &st) == 0, st.st_uid == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o022 == 0,
      let text = KernelKnobs.read(path, limit: 16384)
    else { return nil }
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { continue }
      fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return fields
  }
}
