import Glibc

/// One console lock: a VT of its own, switching locked, kernel messages
/// muted, the lock screen run as the user on it until it exits 0. The record in
/// `stateFile` lets `--release` undo a lock whose holder was killed.
struct Holder {
  static let stateFile = "/run/passlock-vt.state"

  let console: Console
  let originalVT: Int32
  let lockVT: Int32
  let knobs: KernelKnobs
  let user: uid_t

  var lockTTY: String { "/dev/tty\(lockVT)" }

  /// Allocates and opens a free VT *before* switching to it (so an autovt
  /// getty cannot claim it), switches, locks switching, mutes the console.
  static func begin(console: Console, user: uid_t) throws(HolderError) -> (Holder, Int32) {
    // One console lock at a time: switching is locked for every VT, so a
    // second holder (and its unlock) would open someone else's lock.
    let stale = State.read()
    if let stale, stale.holderIsRunning, user != 0 {
      throw .refused("the console is already locked (by passlock-vt \(stale.holder)); only root may lock over it")
    }
    // A holder that was killed left switching locked and the console muted:
    // start from what it recorded, not from its muted values.
    console.unlockSwitching()
    let original = console.active()
    let vt = try console.free()
    let fd = open("/dev/tty\(vt)", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { throw .system("open /dev/tty\(vt)", errno) }
    // The lock screen runs as the user and opens the VT itself.
    fchown(fd, user, 5)  // group tty
    fchmod(fd, 0o600)
    let knobs = stale?.knobs ?? KernelKnobs.current()
    let holder = Holder(console: console, originalVT: original, lockVT: vt, knobs: knobs, user: user)
    State(original: original, lock: vt, knobs: knobs, holder: getpid()).write()
    do { try console.switchTo(vt) } catch {
      // Nothing new is locked: leave the console as it was (a lock a killed
      // holder left stays locked, with its record), and say so.
      if stale != nil { try? console.lockSwitching() } else { unlink(stateFile) }
      fchown(fd, 0, 5)
      fchmod(fd, 0o620)
      close(fd)
      console.release(vt)
      throw error
    }
    try console.lockSwitching()
    KernelKnobs.mute()
    return (holder, fd)
  }

  /// After a real unlock: everything back as it was.
  func end(closing fd: Int32) {
    knobs.restore()
    console.unlockSwitching()
    try? console.switchTo(originalVT)
    fchown(fd, 0, 5)
    fchmod(fd, 0o620)
    close(fd)
    console.release(lockVT)
    unlink(Holder.stateFile)
  }

  /// Root's way out when a holder was killed: unlock switching, restore the
  /// console, switch back and free the lock VT.
  static func release() throws(HolderError) {
    let console = try Console()
    console.unlockSwitching()
    guard let state = State.read() else { return }
    state.knobs.restore()
    try? console.switchTo(state.original)
    console.release(state.lock)
    unlink(stateFile)
  }

  /// Written on the lock VT when the lock screen cannot start: the console
  /// stays locked and says how to get out.
  func emergency(_ fd: Int32) {
    let text = "\u{1b}[0m\u{1b}[H\u{1b}[2J\r\n  This console is locked by passlock.\r\n\r\n"
      + "  The lock screen could not start; from another machine run\r\n"
      + "  'passlock-vt --release' as root.\r\n"
    _ = text.withCString { write(fd, $0, strlen($0)) }
  }
}

/// What `--release` needs, in a root-owned file.
struct State {
  var original: Int32
  var lock: Int32
  var knobs: KernelKnobs
  var holder: pid_t

  /// Whether the recorded holder still runs (a pid reused by anything but
  /// passlock-vt does not count).
  var holderIsRunning: Bool {
    guard holder > 0, kill(holder, 0) == 0 || errno == EPERM else { return false }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/\(holder)/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return false }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).hasSuffix("/passlock-vt")
  }

  func write() {
    let text = "original=\(original)\nlock=\(lock)\nloglevel=\(knobs.consoleLogLevel)\nsysrq=\(knobs.sysrq ?? "")\nholder=\(holder)\n"
    let fd = open(Holder.stateFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return }
    _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
    fsync(fd)
    close(fd)
  }

  static func read() -> State? {
    var st = stat()
    guard lstat(Holder.stateFile, &st) == 0, st.st_uid == 0, st.st_mode & S_IFMT == S_IFREG,
      let text = KernelKnobs.read(Holder.stateFile)
    else { return nil }
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { continue }
      fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    guard let original = fields["original"].flatMap({ Int32($0) }), let lock = fields["lock"].flatMap({ Int32($0) }),
      let level = fields["loglevel"], !level.isEmpty, level.allSatisfy(\.isNumber)
    else { return nil }
    let sysrq = fields["sysrq"].flatMap { $0.isEmpty || !$0.allSatisfy(\.isNumber) ? nil : $0 }
    let holder = fields["holder"].flatMap { pid_t($0) } ?? 0
    return State(original: original, lock: lock, knobs: KernelKnobs(consoleLogLevel: level, sysrq: sysrq), holder: holder)
  }
}
