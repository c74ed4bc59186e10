import Glibc
import PasslockBus

/// Whether logind says a session of a user's is locked (its LockedHint, set
/// by whatever locks it: passlockd, GNOME Shell, KDE's locker), asked over
/// the system bus at its fixed address. Any failure answers no: the
/// passcode is then not offered.
enum LockedSessions {
  static let name = "org.freedesktop.login1"
  /// Each call's bound: a login screen waits on it.
  static let second: UInt64 = 1_000_000

  static func anyLocked(uid: uid_t) -> Bool {
    do throws(BusError) {
      let bus = try Bus(address: Bus.defaultSystemAddress, timeoutMicroseconds: second)
      let sessions = try LogindSessionList.sessions(of: uid, on: bus, timeoutMicroseconds: second)
      for (_, path) in sessions.prefix(16) {
        let reply = try bus.call(
          name, path, "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.login1.Session"), .string("LockedHint")],
          timeoutMicroseconds: second)
        try reply.enterVariant()
        if try reply.bool() { return true }
      }
      return false
    } catch {
      return false
    }
  }
}
