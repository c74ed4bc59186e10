/// logind's ListSessions, read for one user: what passlockd tracks and what
/// pam_passlock asks about (a locked session) both start from it.
public enum LogindSessionList {
  /// The id and object path of each of `uid`'s sessions.
  public static func sessions(of uid: UInt32, on bus: Bus, timeoutMicroseconds: UInt64 = 5_000_000) throws(BusError) -> [(
    id: String, path: String
  )] {
    let reply = try bus.call(
      "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "ListSessions",
      timeoutMicroseconds: timeoutMicroseconds)
    var found: [(id: String, path: String)] = []
    guard try reply.enter("a", "(susso)") else { return [] }
    while try reply.enter("r", "susso") {
      let id = try reply.string()
      let owner = try reply.uint32()
      _ = try reply.string()
      _ = try reply.string()
      let path = try reply.objectPath()
      try reply.exit()
      if owner == uid { found.append((id, path)) }
    }
    try reply.exit()
    return found
  }
}
