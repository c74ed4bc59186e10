import CLinux
import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// The holder paints the lock screen's first frame itself, on the lock VT
/// right after it comes on screen and switching is locked, before the lock
/// screen starts: the lock screen is a second program start (its C
/// library's start-up alone is most of a millisecond here), and rendering
/// the frame is not waited for before the switch (the session goes off
/// screen first, onto the VT cleared beforehand, as physlock's blank VT).
/// Painted only from what the lock screen would draw that first frame
/// from, and only when the holder can know all of it without
/// interpreting anything a user wrote beyond the status cache: the
/// system's configuration (root's own files), the caller's status cache
/// (read as the caller: display only, as for the lock screen) and the
/// language and NO_COLOR from the environment. A user who has a
/// configuration of their own gets the lock screen's frame only.
/// The lock screen starts after it, redraws the same frame and takes the
/// keys typed meanwhile (the holder puts the VT in its raw mode first:
/// nothing echoes).
enum FirstFrame {
  /// A frame the holder can paint: what it is drawn from, every file read
  /// (only rendering and the write are left for after the switch: the
  /// fewer the holder's steps between the switch and its settling, the
  /// sooner a switch that raced it is taken back).
  struct Pending {
    var status: StoreStatus
    var appearance: LockAppearance
    var width: Int
    var height: Int
  }

  /// Clears the lock VT `fd` (the frame's opening): VT_OPENQRY gives the
  /// first VT nobody has open, and one that was used and closed but not
  /// freed still shows what was last drawn on it (a session's text, an
  /// earlier lock's frame). Returns the frame to paint for `caller`, or nil
  /// when it is left to the lock screen (or the VT could not be cleared).
  static func prepare(on fd: Int32, for caller: uid_t) -> Pending? {
    let opening = Array(LockTerminal.opening(linuxConsole: true).utf8)
    guard (try? FileDescriptor(rawValue: fd).writeAll(opening)) != nil else { return nil }
    guard !userHasConfiguration(), let status = cachedStatus(of: caller) else { return nil }
    var columns: UInt16 = 0
    var rows: UInt16 = 0
    guard passlock_terminal_size(fd, &columns, &rows) == 0, columns > 0, rows > 0 else { return nil }
    return Pending(
      status: status, appearance: LockAppearance(configuredBy: systemConfiguration()), width: Int(columns), height: Int(rows))
  }

  /// Renders `pending` and writes it on the lock VT `fd`; false if the
  /// write failed (the lock screen draws its own frame then). Written
  /// without blocking: on screen, the VT's output can be stopped from its
  /// keyboard (Scroll Lock), which must not hold the holder up before its
  /// lock has settled.
  @discardableResult
  static func paint(_ pending: Pending, on fd: Int32) -> Bool {
    let bytes = frame(pending.status, appearance: pending.appearance, width: pending.width, height: pending.height)
    let flags = passlock_fcntl(fd, F_GETFL, 0)
    guard flags >= 0, passlock_fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
    defer { _ = passlock_fcntl(fd, F_SETFL, flags) }
    return (try? FileDescriptor(rawValue: fd).writeAll(bytes)) != nil
  }

  /// The bytes the lock screen's first frame writes: `LockTerminal.begin()`'s
  /// opening, then the frame as `TerminalLockScreen` draws it from a cached
  /// status (`Commands.lock`, `PreparedLockScreen.lockScreen`, `offerExternal`).
  static func frame(_ status: StoreStatus, appearance: LockAppearance, width: Int, height: Int) -> [UInt8] {
    let renderer = appearance.renderer(linuxConsole: true)
    let now = Int64(monotonicNanoseconds() / 1_000_000)
    var screen = LockScreen(unlocking: status, revealLastDigit: renderer.theme.revealLastDigit, now: now)
    _ = screen.start()
    var context = LockRenderer.Context(clock: wallClockText(), userAtHost: userAtHost(status.user))
    if let external = appearance.external, status.externalRefusal.isEmpty { context.externalKey = external.label }
    let (grid, _) = renderer.render(screen, context, now: now, width: width, height: height)
    return Array((LockTerminal.opening(linuxConsole: true) + grid.render(over: nil, color: renderer.capabilities.color)).utf8)
  }

  /// Whether the caller may have a passlock.conf or drop-in directory of
  /// their own: anything but "no such file" for either (access(2) asks as
  /// the real uid: the caller; a path the caller cannot search makes the
  /// lock screen fall back to the defaults, which the holder cannot tell).
  static func userHasConfiguration() -> Bool {
    guard let directory = ConfigLoader.userDirectory() else { return false }
    for path in [directory + "/passlock.conf", directory + "/passlock.conf.d"] {
      if access(path, F_OK) == 0 || errno != ENOENT { return true }
    }
    return false
  }

  /// /etc/passlock's files (a test's own directory only for root). A file
  /// that does not parse gives the defaults, as in the lock screen.
  static func systemConfiguration() -> Config {
    let directory = getuid() == 0 ? ConfigLoader.systemDirectory() : ConfigLoader.defaultSystemDirectory
    return (try? ConfigLoader.load(ConfigLoader.files(in: directory))) ?? Config()
  }

  /// The caller's status cache, opened and read with the caller's file
  /// access rights (no root file can be read through a link there).
  static func cachedStatus(of caller: uid_t) -> StoreStatus? {
    let previous = passlock_set_file_access_uid(caller)  // (x86_64: the 32-bit uid call)
    defer { _ = passlock_set_file_access_uid(uid_t(bitPattern: previous)) }
    return StatusCache.read(owner: caller, tidying: false)
  }
}
