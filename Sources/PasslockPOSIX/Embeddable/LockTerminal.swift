import CLinux
import Glibc

/// The terminal the lock screen takes over: raw input without signals or flow
/// control, the alternate screen (or a cleared console), hidden cursor, mouse
/// and bracketed-paste reporting. `restore()` puts back termios, cursor and
/// screen; it never throws and is safe to call twice.
public final class LockTerminal {
  public let fd: FileDescriptor
  /// The kernel console (TERM=linux or a /dev/ttyN device): no alternate
  /// screen, a CP437 font.
  public let isLinuxConsole: Bool
  private let ownsDescriptor: Bool
  private var saved = termios()
  private var active = false
  /// A session's job stopped while we hold its terminal (only with `--tty`).
  private var frozen: ForegroundJob?
  /// Keys typed before `begin()` count (a VT of its own: whatever reached it
  /// was typed at the lock, on the frame its holder painted).
  public var keepsTypeahead = false

  /// Where the terminal's settings from before the lock are kept while it
  /// lasts: a lock screen that replaces a killed one finds the terminal in
  /// the raw mode its predecessor left, and must give back the settings from
  /// before the lock instead (a shell's, an editor's own raw mode).
  private let settingsFile: String?

  /// Takes over `fd` (the caller's terminal) or, with `path`, opens that
  /// device; `settingsFile` keeps its settings across lock screens.
  public init(path: String?, term: String?, settingsFile: String? = nil) throws(LockTerminalError) {
    self.settingsFile = settingsFile
    if let path {
      do { fd = try FileDescriptor.open(path, O_RDWR | O_NOCTTY) } catch { throw .open(error) }
      ownsDescriptor = true
    } else {
      fd = .standardInput
      ownsDescriptor = false
    }
    guard fd.isTerminal else {
      if ownsDescriptor { fd.close() }
      throw .notATerminal(path)
    }
    let name = ttyname(fd.rawValue).map { String(cString: $0) } ?? ""
    isLinuxConsole = term == "linux" || Self.isVirtualConsole(name)
  }

  deinit {
    restore()
    if ownsDescriptor { fd.close() }
  }

  static func isVirtualConsole(_ name: String) -> Bool {
    guard name.hasPrefix("/dev/tty") else { return false }
    let rest = name.dropFirst(8)
    return !rest.isEmpty && rest.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  }

  /// Raw mode, input flushed (the key that woke the screen is not half a
  /// passcode) unless `keepsTypeahead`, then the lock screen's modes.
  public func begin() throws(LockTerminalError) {
    guard tcgetattr(fd.rawValue, &saved) == 0 else { throw .setup(SystemError("tcgetattr")) }
    if let settingsFile {
      if let before = Self.loadSettings(settingsFile) { saved = before } else { Self.storeSettings(saved, settingsFile) }
    }
    var raw = TerminalMode.rawInput(saved)
    guard tcsetattr(fd.rawValue, TCSANOW, &raw) == 0 else { throw .setup(SystemError("tcsetattr")) }
    active = true
    if !keepsTypeahead { flushInput() }
    write(Self.opening(linuxConsole: isLinuxConsole))
  }

  /// What `begin()` writes: a cleared screen (the alternate one where there
  /// is one), hidden cursor, mouse and bracketed-paste reporting.
  public static func opening(linuxConsole: Bool) -> String {
    let screen = linuxConsole ? "\u{1b}[H\u{1b}[2J\u{1b}[3J" : "\u{1b}[?1049h\u{1b}[H\u{1b}[2J"
    return screen + "\u{1b}[?25l\u{1b}[?1000h\u{1b}[?1006h\u{1b}[?2004h"
  }

  /// Puts the terminal on `fd` in the lock screen's raw mode (no echo: a key
  /// typed at a frame shows nothing). False if it is not a terminal.
  public static func makeRaw(_ fd: Int32) -> Bool {
    var settings = termios()
    guard tcgetattr(fd, &settings) == 0 else { return false }
    var raw = TerminalMode.rawInput(settings)
    return tcsetattr(fd, TCSANOW, &raw) == 0
  }

  /// Someone else's terminal: stops its foreground job so it cannot read our
  /// keys, before any key is read. Through the session's `leader` it is one
  /// /proc read, done before the first frame; otherwise it scans /proc, once
  /// the first frame is up (which need not wait for that).
  /// `scanning: false`: only through `leader`, no /proc scan.
  public func freezeForegroundJob(leader: pid_t? = nil, scanning: Bool = true) {
    guard active, frozen == nil, ownsDescriptor, let job = ForegroundJob.of(fd, leader: leader, scanning: scanning) else {
      return
    }
    job.stop()
    frozen = job
    // Until it stopped it could change the modes and read: set ours again
    // and drop what was typed meanwhile.
    var raw = TerminalMode.rawInput(saved)
    tcsetattr(fd.rawValue, TCSANOW, &raw)
    flushInput()
  }

  public func flushInput() {
    tcflush(fd.rawValue, TCIFLUSH)
  }

  public func write(_ text: String) {
    try? fd.writeAll(text)
  }

  /// Whether Caps Lock is on, where the terminal can tell: a VT's keyboard
  /// flags (KDGKBLED); nil on anything else (a pty has no keyboard).
  public func capsLock() -> Bool? {
    var on: Int32 = 0
    return passlock_console_caps_lock(fd.rawValue, &on) == 0 ? on != 0 : nil
  }

  /// Columns and rows (TIOCGWINSZ); 80×24 when the terminal does not say.
  public func size() -> (width: Int, height: Int) {
    var columns: UInt16 = 0
    var rows: UInt16 = 0
    guard passlock_terminal_size(fd.rawValue, &columns, &rows) == 0, columns > 0, rows > 0 else { return (80, 24) }
    return (Int(columns), Int(rows))
  }

  static func loadSettings(_ path: String) -> termios? {
    guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
    defer { fd.close() }
    guard let bytes = try? fd.readAll(limit: 256), bytes.count == MemoryLayout<termios>.size else { return nil }
    var settings = termios()
    withUnsafeMutableBytes(of: &settings) { $0.copyBytes(from: bytes) }
    return settings
  }

  /// Not fsynced: the file lives in the runtime directory, which a reboot
  /// empties; the next lock screen reads it from the page cache.
  static func storeSettings(_ settings: termios, _ path: String) {
    let fd = passlock_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    withUnsafeBytes(of: settings) { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)
  }

  public func restore() {
    guard active else { return }
    active = false
    let screen = isLinuxConsole ? "\u{1b}[0m\u{1b}[H\u{1b}[2J\u{1b}[3J" : "\u{1b}[0m\u{1b}[?1049l"
    write("\u{1b}[?2004l\u{1b}[?1006l\u{1b}[?1000l" + screen + "\u{1b}[?25h")
    _ = tcsetattr(fd.rawValue, TCSADRAIN, &saved)
  }

  /// After a real unlock only: the session's job runs again.
  public func releaseSession() {
    frozen?.resume()
    frozen = nil
  }
}

public enum LockTerminalError: Error, CustomStringConvertible {
  case open(SystemError)
  case notATerminal(String?)
  case setup(SystemError)

  public var description: String {
    switch self {
    case .open(let error): return "cannot open the terminal: \(error)"
    case .notATerminal(let path?): return "\(path) is not a terminal"
    case .notATerminal(nil):
      return "standard input is not a terminal; run 'passlock lock' in a terminal, or pass --tty PATH"
    case .setup(let error): return "cannot set up the terminal: \(error)"
    }
  }
}
