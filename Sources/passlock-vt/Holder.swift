import CLinux
import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// One console lock: a VT of its own, switching locked, kernel messages
/// muted, the lock screen run as the user on it until it exits 0. The record in
/// `stateFile` lets `--release` undo a lock whose holder was killed.
struct Holder {
  static let stateFile = ConsoleHolder.statePath

  let console: Console
  let originalVT: Int32
  let lockVT: Int32
  let knobs: KernelKnobs
  let user: uid_t
  /// The record of the killed holder's lock this one was made over.
  let stale: State?

  var lockTTY: String { "/dev/tty\(lockVT)" }

  /// A VT of its own, allocated and opened, owned by the user; nothing on
  /// screen has changed yet. It comes on screen cleared, and the holder's
  /// first frame is painted on it once switching is locked, or the first
  /// lock screen was started just before the switch.
  struct Prepared {
    let vt: Int32
    let fd: Int32
    let stale: State?
    var tty: String { "/dev/tty\(vt)" }

    /// The VT goes back to root and is freed (nothing is locked on it now).
    /// Cleanup never fails: a VT whose owner cannot be reset is still freed,
    /// and the next login on it (getty, logind) sets its owner anew.
    func abandon(_ console: Console) {
      let descriptor = FileDescriptor(rawValue: fd)
      try? descriptor.changeOwner(0, group: 5)
      try? descriptor.changeMode(0o620)
      close(fd)
      console.release(vt)
    }
  }

  /// Allocates and opens a free VT *before* anything switches to it (so an
  /// autovt getty cannot claim it).
  static func prepare(console: Console, user: uid_t) throws(HolderError) -> Prepared {
    // One console lock at a time: switching is locked for every VT, so a
    // second holder (and its unlock) would open someone else's lock.
    let stale = State.read()
    if let stale, stale.holderIsRunning, user != 0 {
      throw .refused("the console is already locked (by passlock-vt \(stale.holder)); only root may lock over it")
    }
    let vt = try console.free()
    let fd = passlock_open("/dev/tty\(vt)", O_RDWR | O_NOCTTY | O_CLOEXEC, 0)
    guard fd >= 0 else { throw .system(SystemError("open", path: "/dev/tty\(vt)")) }
    // The lock screen runs as the user and opens the VT itself: a VT it
    // could not open would be a console nothing unlocks.
    let prepared = Prepared(vt: vt, fd: fd, stale: stale)
    do {
      try FileDescriptor(rawValue: fd).changeOwner(user, group: 5)  // group tty
      try FileDescriptor(rawValue: fd).changeMode(0o600)
    } catch {
      prepared.abandon(console)
      throw .system(error)
    }
    return prepared
  }

  /// Switches to the prepared VT and locks switching. The settle watch
  /// (`settle`) follows as a step of its own: what starts once switching is
  /// locked starts between the two.
  static func lock(_ prepared: Prepared, console: Console, user: uid_t) throws(HolderError) -> Holder {
    // A holder that was killed left switching locked and the console muted:
    // start from what it recorded, not from its muted values.
    let stale = prepared.stale
    console.unlockSwitching()
    // Over a stale lock the VT on screen is the dead holder's lock VT.
    let original = stale?.original ?? console.active()
    let knobs = stale?.knobs ?? KernelKnobs.current()
    let holder = Holder(
      console: console, originalVT: original, lockVT: prepared.vt, knobs: knobs, user: user, stale: stale)
    // Nothing is locked that --release could not undo.
    guard State(original: original, lock: prepared.vt, knobs: knobs, holder: getpid()).write() else {
      if stale != nil { try? console.lockSwitching() }
      throw .system(SystemError("write", path: stateFile))
    }
    do throws(HolderError) {
      try console.switchTo(prepared.vt)
      try console.lockSwitching()
    } catch {
      holder.undo()
      throw error  // the caller ends the lock screen, then abandons the VT
    }
    return holder
  }

  /// A switch requested before the lock (Ctrl-Alt-Fn at that very moment)
  /// is carried out by the kernel later, lock or not, and would leave the
  /// session on screen behind a locked console. Such a request is done
  /// within a few ms: watch for 30 ms that the lock VT stays on screen, then
  /// mute the console. On failure the lock is undone.
  func settle() throws(HolderError) {
    var tries = 0
    var settled = monotonicSeconds() + 0.03
    while monotonicSeconds() < settled {
      if console.active() != lockVT {
        tries += 1
        guard tries < 10 else {
          undo()
          throw .stuck("the console keeps switching away from the lock VT")
        }
        do throws(HolderError) { try console.takeBack(lockVT) } catch {
          undo()
          throw error
        }
        settled = monotonicSeconds() + 0.03
      }
      usleep(500)
    }
    KernelKnobs.mute()
  }

  /// Nothing new is locked: the console as it was (a lock a killed holder
  /// left stays locked, with its record).
  private func undo() {
    if let stale {
      try? console.lockSwitching()
      _ = stale.write()  // its record again, not the one naming our freed VT
    } else {
      console.unlockSwitching()
      // The session back on screen if the switch went through (a lock that
      // failed after it must not leave the lock VT there, unlocked).
      if console.active() == lockVT { try? console.switchTo(originalVT) }
      unlink(Holder.stateFile)
    }
  }

  /// After a real unlock: everything back as it was.
  func end(closing fd: Int32) {
    knobs.restore()
    console.unlockSwitching()
    try? console.switchTo(originalVT)
    Prepared(vt: lockVT, fd: fd, stale: nil).abandon(console)
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
    let text =
      "\u{1b}[0m\u{1b}[H\u{1b}[2J\r\n  This console is locked by passlock.\r\n\r\n"
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
    return Directory.linkTarget("/proc/\(holder)/exe")?.hasSuffix("/passlock-vt") ?? false
  }

  /// The record's last line: a record without it was not written whole.
  static let end = "end=1\n"

  var serialized: String {
    "original=\(original)\nlock=\(lock)\nloglevel=\(knobs.consoleLogLevel)\nsysrq=\(knobs.sysrq ?? "")\nholder=\(holder)\n"
      + State.end
  }

  /// Writes the record; false unless all of it was written. Through a
  /// temporary file and a rename: the record it replaces (a killed holder's)
  /// stays whole until the new one is. Not fsynced: the record is for a
  /// holder killed while the machine runs (a reboot resets the consoles and
  /// empties /run), and other processes see a written file at once. An fsync
  /// cost 2–3 ms before the switch wherever /run is not a tmpfs. The
  /// caller's RLIMIT_FSIZE, which could cut it short, is lifted for the write
  /// only (ResourceLimits): the lock screens started later keep the caller's.
  func write() -> Bool {
    let temporary = Holder.stateFile + ".tmp"
    unlink(temporary)
    guard let fd = try? FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600) else {
      return false
    }
    let written = ResourceLimits.withoutFileSizeLimit { (try? fd.writeAll(serialized)) != nil }
    fd.close()
    guard written, rename(temporary, Holder.stateFile) == 0 else {
      unlink(temporary)
      return false
    }
    return true
  }

  /// The record, if it is root's and whole (a cut one would restore cut values).
  static func read() -> State? {
    guard let fields = RootOwnedFile.keyValues(Holder.stateFile), fields["end"] == "1" else { return nil }
    guard let original = fields["original"].flatMap({ Int32($0) }), let lock = fields["lock"].flatMap({ Int32($0) }),
      let level = fields["loglevel"], !level.isEmpty, level.allSatisfy({ $0.isNumber })
    else { return nil }
    let sysrq = fields["sysrq"].flatMap { $0.isEmpty || !$0.allSatisfy({ $0.isNumber }) ? nil : $0 }
    let holder = fields["holder"].flatMap { pid_t($0) } ?? 0
    return State(original: original, lock: lock, knobs: KernelKnobs(consoleLogLevel: level, sysrq: sysrq), holder: holder)
  }
}
