import Glibc

// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
#endif

/// systemd-logind's public state files, the ones sd-login(3) reads:
/// /run/systemd/seats/SEAT (the seat's active session and its sessions) and
/// /run/systemd/sessions/ID (a session's user, VT, class, state, remoteness).
/// Only root can write them, and only root-owned files not writable by others
/// are believed; where logind does not run they do not exist.
public enum LogindStateFiles {
  public static let seatDirectory = "/run/systemd/seats"
  public static let sessionDirectory = "/run/systemd/sessions"

  /// One session as logind records it.
  public struct Session: Equatable, Sendable {
    public var id: String
    public var uid: uid_t
    /// 0 when the session has no VT.
    public var vt: Int32
    public var seat: String
    /// user, greeter, lock-screen, manager, background…
    public var sessionClass: String
    /// online, active, closing.
    public var state: String
    public var remote: Bool

    public init(
      id: String, uid: uid_t, vt: Int32, seat: String = "seat0", sessionClass: String = "user", state: String = "active",
      remote: Bool = false
    ) {
      self.id = id
      self.uid = uid
      self.vt = vt
      self.seat = seat
      self.sessionClass = sessionClass
      self.state = state
      self.remote = remote
    }
  }

  /// A seat: its active session (if any) and every session on it.
  public struct Seat: Equatable, Sendable {
    public var active: String?
    public var sessions: [String]
  }

  public static func seat(_ name: String) -> Seat? {
    guard isName(name), let fields = fields(seatDirectory + "/" + name) else { return nil }
    let active = fields["ACTIVE"].flatMap { $0.isEmpty ? nil : $0 }
    return Seat(active: active, sessions: (fields["SESSIONS"] ?? "").split(separator: " ").map(String.init))
  }

  /// Session `id` as logind records it now; nil once it is gone.
  public static func session(_ id: String) -> Session? {
    guard isName(id), let fields = fields(sessionDirectory + "/" + id), let uid = fields["UID"].flatMap({ uid_t($0) }) else {
      return nil
    }
    return Session(
      id: id, uid: uid, vt: fields["VTNR"].flatMap { Int32($0) } ?? 0, seat: fields["SEAT"] ?? "",
      sessionClass: fields["CLASS"] ?? "user", state: fields["STATE"] ?? "", remote: fields["REMOTE"] == "1")
  }

  /// The logind session of `uid`'s this process runs in, from its control
  /// group, or nil outside one.
  public static func sessionOfThisProcess(uid: uid_t) -> String? {
    guard let fd = try? FileDescriptor.open("/proc/self/cgroup", O_RDONLY) else { return nil }
    defer { fd.close() }
    guard let bytes = try? fd.readAll(limit: 1 << 16) else { return nil }
    return sessionID(inControlGroups: String(decoding: bytes, as: UTF8.self), uid: uid)
  }

  /// The session id in /proc/PID/cgroup's text (cgroup v2's `0::/path`, or
  /// v1's `name=systemd` hierarchy), only in the exact place logind puts a
  /// session of `uid`: /user.slice/user-UID.slice/session-ID.scope. The user
  /// may make cgroups named like that inside their own user manager's
  /// delegated subtree; those are deeper, and do not count.
  public static func sessionID(inControlGroups text: String, uid: uid_t) -> String? {
    let prefix = "/user.slice/user-\(uid).slice/session-"
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
      guard parts.count == 3, parts[1].isEmpty || parts[1] == "name=systemd" else { continue }
      let path = parts[2]
      guard path.hasPrefix(prefix), path.hasSuffix(".scope") else { continue }
      let id = String(path.dropFirst(prefix.count).dropLast(".scope".count))
      if isName(id) { return id }
    }
    return nil
  }

  /// Whether systemd runs this machine (sd_booted(3): /run/systemd/system
  /// exists), and so systemd-logind keeps its state here.
  public static var logindRuns: Bool {
    var st = stat()
    return lstat("/run/systemd/system", &st) == 0 && st.st_uid == 0 && st.st_mode & S_IFMT == S_IFDIR
  }

  /// `uid`'s display session (logind's pick of the user's main session:
  /// graphical before text, local before remote), if any.
  public static func displaySession(of uid: uid_t) -> Session? {
    guard let fields = RootOwnedFile.keyValues("/run/systemd/users/\(uid)"), let id = fields["DISPLAY"], !id.isEmpty,
      let session = session(id), session.uid == uid
    else { return nil }
    return session
  }

  /// Every session of `uid`'s that logind records (its user file's SESSIONS).
  public static func sessions(of uid: uid_t) -> [Session] {
    guard let fields = RootOwnedFile.keyValues("/run/systemd/users/\(uid)") else { return [] }
    return (fields["SESSIONS"] ?? "").split(separator: " ").compactMap { session(String($0)) }.filter { $0.uid == uid }
  }

  /// Seat and session ids are short tokens ("seat0", "3", "c1").
  static func isName(_ id: String) -> Bool {
    !id.isEmpty && id.utf8.count < 64 && !id.hasPrefix("-")
      && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
  }

  static func fields(_ path: String) -> [String: String]? { RootOwnedFile.keyValues(path) }
}
