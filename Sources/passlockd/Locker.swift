import Glibc
import PasslockPOSIX

/// One running lock for a session: `passlock lock --tty DEVICE --ready-fd 3`
/// (direct mode) or `passlock-vt --vt N --ready-fd 3` (VT mode). Either writes
/// one byte on fd 3 once the first frame is on screen, and exits 0 only
/// after a real unlock.
final class Locker {
  /// What it runs: a restart runs the same.
  let command: [String]
  /// passlock-vt, not a lock screen on the session's own terminal.
  let isConsoleHolder: Bool
  let pid: pid_t
  /// When it was started (monotonic ns): how long it ran decides the backoff.
  let startedAt = monotonicNanoseconds()
  private(set) var isReady = false
  private let loop: EventLoop
  /// The ready pipe's read end and its watch, until the byte or the end.
  private var ready: (fd: Int32, watch: EventLoop.Token)?

  init(
    command: [String], consoleHolder: Bool, loop: EventLoop, onReady: @escaping () -> Void
  ) throws(SystemError) {
    self.loop = loop
    self.command = command
    self.isConsoleHolder = consoleHolder
    let ready = try closeOnExecPipe()
    do {
      let name = String(command[0].split(separator: "/").last ?? "")
      pid = try ChildProcess.launch(
        command[0], arguments: [name] + command.dropFirst(), descriptors: [(parent: ready.write, child: 3)])
    } catch {
      close(ready.read)
      close(ready.write)
      throw error
    }
    close(ready.write)
    let readEnd = ready.read
    let watch = loop.watch(readEnd) { [unowned self] in
      var byte: UInt8 = 0
      let n = read(readEnd, &byte, 1)
      forget()
      if n == 1 {
        isReady = true
        onReady()
      }
    }
    self.ready = (readEnd, watch)
  }

  /// Stops the overlay (SIGKILL: it ignores the polite signals by design).
  func kill() {
    forget()
    _ = Glibc.kill(pid, SIGKILL)
  }

  /// Stops watching the ready pipe and closes it.
  func forget() {
    guard let ready else { return }
    loop.cancel(ready.watch)
    close(ready.fd)
    self.ready = nil
  }
}
