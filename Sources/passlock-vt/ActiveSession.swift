import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// The session on screen, as systemd-logind records it in its public state
/// files (LogindStateFiles): seat0's active session, its user and its VT.
///
/// passlock-vt locks only for the user whose session that is, and only while
/// no other user has a session on seat0. A console lock locks switching for
/// the whole console: without the second rule, a user with a session of their
/// own on the seat (a console login left running, a display-manager session)
/// could make it the active one (VT_ACTIVATE from its terminal) and then lock
/// everyone else out of theirs. On a shared seat the caller's sessions are
/// locked each on its own terminal instead (passlockd's fallback on exit
/// status 4), as vlock without -a does. Greeters do not count: they are the
/// display manager's, not a user's. Without logind nothing says whose session
/// is on screen: then only root may lock (as with physlock run by root).
struct ActiveSession: Equatable {
  var id: String
  var uid: uid_t
  var vt: Int32

  enum Lookup: Equatable {
    /// logind does not run (no seat0 state file).
    case noLogind
    /// logind runs but no session is active on seat0.
    case noActiveSession
    case active(ActiveSession)
  }

  static func lookUp() -> Lookup {
    guard let seat = LogindStateFiles.seat("seat0") else { return .noLogind }
    guard let id = seat.active, let session = session(id) else { return .noActiveSession }
    return .active(session)
  }

  /// Session `id` as logind records it now; nil once it is gone.
  static func session(_ id: String) -> ActiveSession? {
    LogindStateFiles.session(id).map { ActiveSession(id: $0.id, uid: $0.uid, vt: $0.vt) }
  }

  /// Sessions of other users on seat0 that a console lock would shut out:
  /// logins (class `user`, `user-early`…; not a greeter), not closing.
  static func othersOnSeat(besides uid: uid_t) -> [LogindStateFiles.Session] {
    guard let seat = LogindStateFiles.seat("seat0") else { return [] }
    return seat.sessions.compactMap(LogindStateFiles.session).filter {
      $0.uid != uid && LogindSession.isLogin(sessionClass: $0.sessionClass) && $0.state != "closing"
    }
  }
}
