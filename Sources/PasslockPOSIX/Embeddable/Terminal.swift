import Glibc

/// A terminal whose settings are changed for the life of this value and
/// restored by `restore()` (termios is reversible state; restoring never throws).
public final class TerminalMode {
  public let fd: FileDescriptor
  private var saved = termios()
  private var active = false

  /// Switches `fd` to byte-at-a-time input without echo or signals, so that the
  /// caller sees Ctrl-C as a byte and can restore the terminal before leaving.
  public init(rawInput fd: FileDescriptor) throws(SystemError) {
    self.fd = fd
    guard tcgetattr(fd.rawValue, &saved) == 0 else { throw SystemError("tcgetattr") }
    var raw = Self.rawInput(saved)
    guard tcsetattr(fd.rawValue, TCSAFLUSH, &raw) == 0 else { throw SystemError("tcsetattr") }
    active = true
  }

  /// `settings` with input byte by byte (VMIN 1, VTIME 0), no echo, no
  /// signal keys, no flow control and no CR/NL translation: every key the
  /// user presses reaches the reader as it was typed.
  static func rawInput(_ settings: termios) -> termios {
    var raw = settings
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ECHONL | ISIG | IEXTEN)
    raw.c_iflag &= ~tcflag_t(IXON | IXOFF | ICRNL | INLCR | IGNCR | BRKINT | ISTRIP)
    raw.c_cc.6 = 1  // VMIN
    raw.c_cc.5 = 0  // VTIME
    return raw
  }

  public func restore() {
    guard active else { return }
    _ = tcsetattr(fd.rawValue, TCSAFLUSH, &saved)
    active = false
  }

  deinit { restore() }
}
