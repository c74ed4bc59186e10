import CLinux
import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// What is locked, under $XDG_RUNTIME_DIR/passlock/locked/: one file per
/// session holding its locker's pid, so a daemon that was killed and started
/// again locks them again (and replaces a locker that outlived it).
struct LockRecords {
  let directory: String

  static func inRuntimeDirectory() -> LockRecords? {
    guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    let base = runtime + "/passlock"
    mkdir(base, 0o700)
    mkdir(base + "/locked", 0o700)
    return LockRecords(directory: base + "/locked")
  }

  /// The record's file; the lock screen removes it after a real unlock.
  func path(_ session: String) -> String { directory + "/" + session }

  /// Not fsynced: the records are for a daemon restarted while the machine
  /// runs, and the runtime directory does not outlive a reboot.
  func add(_ session: String, locker: pid_t) {
    guard Self.isSafe(session) else { return }
    let fd = passlock_open(path(session), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    if fd >= 0 {
      try? FileDescriptor(rawValue: fd).writeAll("\(locker)\n")
      close(fd)
    }
  }

  struct Survivor {
    var pid: pid_t
    var isConsoleHolder: Bool
  }

  /// The locker recorded for `session`, if it still runs (`passlock lock` or `passlock-vt`).
  func survivingLocker(_ session: String) -> Survivor? {
    guard Self.isSafe(session), let fd = try? FileDescriptor.open(directory + "/" + session, O_RDONLY) else { return nil }
    defer { fd.close() }
    guard let text = try? fd.readAll(limit: 64), let pid = pid_t(String(decoding: text, as: UTF8.self).trimming("\n")),
      pid > 0, let command = try? FileDescriptor.open("/proc/\(pid)/cmdline", O_RDONLY)
    else { return nil }
    defer { command.close() }
    let words = ((try? command.readAll()) ?? []).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    guard let program = words.first else { return nil }
    if program.hasSuffix("passlock-vt") { return Survivor(pid: pid, isConsoleHolder: true) }
    // `passlock lock --wayland` became passlock-wayland (exec).
    if program.hasSuffix("passlock-wayland") { return Survivor(pid: pid, isConsoleHolder: false) }
    return program.hasSuffix("passlock") && words.dropFirst().first == "lock" ? Survivor(pid: pid, isConsoleHolder: false) : nil
  }

  func remove(_ session: String) {
    guard Self.isSafe(session) else { return }
    unlink(path(session))
    unlink(path(session) + ".termios")  // the lock screens' saved terminal settings
  }

  func all() -> [String] {
    (Directory.names(directory) ?? []).filter(Self.isSafe)
  }

  /// Session ids are short tokens ("c1", "3"); nothing that walks the filesystem.
  static func isSafe(_ id: String) -> Bool {
    !id.isEmpty && id.count < 64 && !id.hasPrefix(".") && id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
  }
}
