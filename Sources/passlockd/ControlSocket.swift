import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// The daemon's control socket, $XDG_RUNTIME_DIR/passlock/daemon.sock, in a
/// 0700 directory; peers are also checked with SO_PEERCRED (same uid only).
/// One line in, one answer out: `status` (text), `status-json`, `refresh`
/// (the passcode was set or removed), `lock` (ask logind to lock our sessions).
enum ControlSocket {
  static func path() -> String? {
    environment("XDG_RUNTIME_DIR").flatMap { $0.hasPrefix("/") ? $0 + "/passlock/daemon.sock" : nil }
  }

  static func start(daemon: Daemon) {
    guard let path = path(), path.utf8.count < 100 else {
      Log.warning("no XDG_RUNTIME_DIR: no control socket, 'passlock status' will not show the daemon")
      return
    }
    let directory = String(path[..<path.lastIndex(of: "/")!])
    mkdir(directory, 0o700)
    chmod(directory, 0o700)
    unlink(path)
    let listener: FileDescriptor
    do throws(SystemError) {
      guard let address = UnixSocketAddress(path: path) else { throw SystemError("bind", path: path, errno: ENAMETOOLONG) }
      listener = try UnixSocket.listen(at: address, backlog: 8)
    } catch {
      return Log.error("control socket \(path): \(error)")
    }
    chmod(path, 0o600)
    daemon.loop.watch(listener.rawValue) {
      guard let client = UnixSocket.accept(listener) else { return }
      defer { client.close() }
      serve(client, daemon: daemon)
    }
  }

  private static func serve(_ client: FileDescriptor, daemon: Daemon) {
    guard let peer = try? PeerCredentials.of(client.rawValue), peer.uid == getuid() else { return }
    // A same-uid client that never writes must not stall the daemon.
    UnixSocket.setReceiveTimeout(client, seconds: 1)
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = buffer.withUnsafeMutableBytes { bytes in (try? client.read(into: bytes)) ?? 0 }
    guard n > 0 else { return }
    let command = String(decoding: buffer[..<n], as: UTF8.self).trimming("\n\r ")
    let answer: String
    switch command {
    case "status": answer = DaemonStatus(daemon).text()
    case "status-json": answer = DaemonStatus(daemon).json() + "\n"
    case "refresh":
      daemon.refreshPasscode()
      answer = "ok\n"
    case "lock": answer = daemon.askLogindToLock()
    default: answer = "error: unknown command\n"
    }
    try? client.writeAll(answer)
  }
}

/// The daemon's view for `passlock status`.
struct DaemonStatus {
  let daemon: Daemon
  init(_ daemon: Daemon) { self.daemon = daemon }

  struct Row {
    var id, tty: String
    var remote, locked: Bool
    var idleIn: Int64?
    /// The compositor that times its idle lock ("wayland-1"), when one does.
    var idleCompositor: String?
    /// What its compositor does that a lock needs undone (HyprlandLockRestore).
    var compositorWarning: String?
    var problem: String?
    var note: String?
    /// The desktop that locks it by itself, when the lock is left to it (LockPlan.desktop).
    var lockedBy: String?
  }

  var rows: [Row] {
    let now = wallClockSeconds()
    return daemon.sessions.values.sorted { $0.id < $1.id }.map { session in
      var desktop: String?
      if !session.isLocked, case .desktop(let name) = daemon.plan(session.info, selfLocking: daemon.selfLockingDesktop(of: session.info)) {
        desktop = name
      }
      return Row(
        id: session.id, tty: session.info.tty, remote: session.info.remote, locked: session.isLocked,
        idleIn: daemon.idle.deadlines[session.id].map { max(0, $0 - now) }, idleCompositor: daemon.idleCompositor(of: session.id),
        compositorWarning: session.compositorWarning, problem: session.problem,
        note: desktop.map(SelfLockingDesktops.statusNote) ?? session.note, lockedBy: desktop)
    }
  }

  func text() -> String {
    var out = "Daemon: running, inhibitor \(daemon.inhibitor == nil ? "not held" : "held")\n"
    if let problem = daemon.inhibitorProblem {
      out +=
        SleepHookFiles.hookInstalled
        ? "Daemon: \(problem); the lock before sleep is kept by \(SleepHookFiles.keptBy)\n"
        : "Daemon: \(problem): the machine may sleep before the lock screen is up (install polkitd)\n"
    }
    if let problem = daemon.gatekeeperProblem { out += "Daemon: cannot read the passcode store: \(problem)\n" }
    if !daemon.idleInhibitors.isEmpty {
      out += "Idle lock: held off by \(daemon.idleInhibitors.map { $0.summary }.joined(separator: "; "))\n"
    }
    for row in rows {
      var line = "Session \(row.id): \(row.tty.isEmpty ? "no TTY" : row.tty)"
      line += row.remote ? ", remote (left alone)" : row.lockedBy != nil ? "" : row.locked ? ", locked" : ", unlocked"
      if let idle = row.idleIn { line += ", idle lock in \(TimeText.clock(idle))" }
      if let compositor = row.idleCompositor { line += ", idle timed by its compositor (\(compositor))" }
      if let problem = row.problem { line += ", \(problem)" }
      if let note = row.note { line += ", \(note)" }
      if let warning = row.compositorWarning { line += "\n  Warning: \(warning)" }
      out += line + "\n"
    }
    return out
  }

  func json() -> String {
    let sessions = rows.map { row in
      "{\"id\":\(JSON.quoted(row.id)),\"tty\":\(JSON.quoted(row.tty)),\"remote\":\(row.remote),\"locked\":\(row.locked),"
        + "\"idle_lock_in_seconds\":\(row.idleIn.map(String.init) ?? "null"),"
        + "\"idle_timed_by_compositor\":\(row.idleCompositor.map(JSON.quoted) ?? "null"),\"problem\":\(row.problem.map(JSON.quoted) ?? "null"),"
        + "\"compositor_warning\":\(row.compositorWarning.map(JSON.quoted) ?? "null"),\"note\":\(row.note.map(JSON.quoted) ?? "null"),\"locked_by\":\(row.lockedBy.map(JSON.quoted) ?? "null"),"
        + "\"passcode_on_its_lock_screen\":\(row.lockedBy == nil ? "null" : String(SelfLockingDesktops.passcodeOnTheirLockScreens))}"
    }
    let idle = daemon.idleInhibitors.map { inhibitor in
      "{\"who\":\(JSON.quoted(inhibitor.who)),\"why\":\(JSON.quoted(inhibitor.why)),\"pid\":\(inhibitor.pid)}"
    }
    return
      "{\"inhibitor\":\(daemon.inhibitor != nil),\"inhibitor_problem\":\(daemon.inhibitorProblem.map(JSON.quoted) ?? "null"),"
      + "\"sleep_hook\":\(SleepHookFiles.hookInstalled),\"store_problem\":\(daemon.gatekeeperProblem.map(JSON.quoted) ?? "null"),"
      + "\"idle_held_off_by\":[\(idle.joined(separator: ","))],\"sessions\":[\(sessions.joined(separator: ","))]}"
  }
}
