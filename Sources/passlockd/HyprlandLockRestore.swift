import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Hyprland keeps a session locked when its lock screen dies, but lets a new
/// lock screen take the lock over only with `misc:allow_session_lock_restore`
/// (off by default). Without it, a crashed or killed lock screen leaves
/// Hyprland's "lockdead" screen, which nothing but a switch to a TTY and a
/// config change ends (hyprlock#779, #991): passlockd's takeover cannot work
/// there. So passlockd asks each Hyprland showing one of its sessions, once
/// and before any lock, through `hyprctl`, and warns in the journal and in
/// `passlock status` when the option is off.
enum HyprlandLockRestore {
  static let option = "misc:allow_session_lock_restore"
  static let warning =
    "Hyprland's \(option) is off: a lock screen that dies leaves Hyprland's lockdead screen, and no new lock screen can take the lock over; add `misc { allow_session_lock_restore = true }` to hyprland.conf"

  /// The instance signature of the Hyprland listening on `display`: each
  /// instance's `hypr/<signature>/hyprland.lock` in the runtime directory
  /// holds its pid, then its Wayland socket's name.
  static func instance(display: String, runtime: String) -> String? {
    for signature in Directory.names(runtime + "/hypr") ?? [] where !signature.hasPrefix(".") {
      let lines = SmallFile.read(runtime + "/hypr/" + signature + "/hyprland.lock")?.split(separator: "\n") ?? []
      if lines.count >= 2, lines[1] == display { return signature }
    }
    return nil
  }

  /// Whether `hyprctl -j getoption` says the option is off (`"int": 0`),
  /// on (any other number), or nil when its answer says neither.
  static func isOff(hyprctlAnswer: String) -> Bool? {
    // The JSON's one number, `"int": N` (no JSON parser for one field).
    let bytes = Array(hyprctlAnswer.utf8)
    let key = Array("\"int\"".utf8)
    guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: key) }) else { return nil }
    let rest = bytes[(start + key.count)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ":") }
    let digits = rest.prefix { $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    guard let value = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
    return value == 0
  }

  /// `hyprctl` on our PATH, if there.
  static func hyprctl() -> String? {
    for directory in (environment("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
      let path = String(directory) + "/hyprctl"
      if access(path, X_OK) == 0 { return path }
    }
    return nil
  }
}

extension Daemon {
  /// Asks every Hyprland that shows one of our sessions about the option,
  /// once per compositor (at start-up, when a compositor's socket
  /// appears). Never blocks the loop: hyprctl's answer is read there, and a
  /// hyprctl that has not answered within 2 s is killed.
  func checkHyprlandLockRestore() {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return }
    // No Hyprland instance in the runtime directory: nothing to warn of, and
    // no compositor to look for (each look connects to every compositor and
    // asks logind).
    guard Directory.names(runtime + "/hypr")?.isEmpty == false else {
      for id in sessions.keys {
        sessions[id]?.hyprlandChecked = nil
        sessions[id]?.compositorWarning = nil
      }
      return
    }
    for session in sessionInfos where !session.remote && (session.type == "wayland" || session.type == "tty") {
      guard let display = waylandCompositor(showing: session) else { continue }
      // Once per compositor: its socket, and its instance when a Hyprland
      // (one restarted on the same socket is asked again).
      let signature = HyprlandLockRestore.instance(display: display, runtime: runtime)
      let compositor = display + "/" + (signature ?? "")
      guard sessions[session.id]?.hyprlandChecked != compositor else { continue }
      sessions[session.id]?.hyprlandChecked = compositor
      sessions[session.id]?.compositorWarning = nil
      if let signature { askHyprctl(signature: signature, runtime: runtime, session: session.id) }
    }
  }

  private func askHyprctl(signature: String, runtime: String, session id: String) {
    guard let path = HyprlandLockRestore.hyprctl() else {
      return Log.warning("session \(id): Hyprland without hyprctl on PATH: cannot tell whether \(HyprlandLockRestore.option) is on")
    }
    let child: ChildProcess
    do {
      child = try ChildProcess.spawn(
        path, arguments: ["hyprctl", "-j", "getoption", HyprlandLockRestore.option],
        environment: [
          "HYPRLAND_INSTANCE_SIGNATURE=\(signature)", "XDG_RUNTIME_DIR=\(runtime)", "PATH=\(environment("PATH") ?? "/usr/bin:/bin")",
        ])
    } catch {
      return Log.warning("session \(id): cannot run \(path): \(error)")
    }
    child.input.close()
    var answer: [UInt8] = []
    var watch: EventLoop.Token?
    var deadline: EventLoop.Token?
    let finish = { [self] (timedOut: Bool) in
      loop.cancel(watch)
      loop.cancel(deadline)
      child.output.close()
      // Reaped with every other child (watchChildren).
      if timedOut { _ = kill(child.pid, SIGKILL) }
      hyprctlAnswered(timedOut ? nil : String(decoding: answer, as: UTF8.self), session: id)
    }
    watch = loop.watch(child.output.rawValue) {
      var buffer = [UInt8](repeating: 0, count: 1024)
      let count = buffer.withUnsafeMutableBytes { (try? child.output.read(into: $0)) ?? 0 }
      answer += buffer[0..<count]
      if count == 0 || answer.count > 16_384 { finish(false) }
    }
    deadline = loop.after(milliseconds: 2000) { finish(true) }
  }

  private func hyprctlAnswered(_ answer: String?, session id: String) {
    guard sessions[id] != nil else { return }
    switch answer.flatMap(HyprlandLockRestore.isOff) {
    case true?:
      sessions[id]?.compositorWarning = HyprlandLockRestore.warning
      Log.warning("session \(id): \(HyprlandLockRestore.warning)")
    case false?: Log.info("session \(id): Hyprland lets a new lock screen take the lock over (\(HyprlandLockRestore.option))")
    case nil:
      Log.warning(
        "session \(id): hyprctl gave no answer about \(HyprlandLockRestore.option): \(answer.map { String($0.prefix(200)) } ?? "none within 2 s")"
      )
    }
  }
}
