import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// One running lock for a session: `passlock lock --tty DEVICE --ready-fd 3`
/// (direct mode), `passlock-vt --vt N --ready-fd 3` (VT mode) or `passlock
/// lock --wayland --ready-fd 3` (in the session). Each writes one byte on fd
/// 3 once its lock is on screen (the Wayland one once the compositor says
/// `locked` and has shown its frame on every output, at most 1 s after
/// `locked`), and exits 0 only after a real unlock.
final class Locker {
  /// Which kind of lock it is: what its exit statuses mean differs.
  enum Kind: Equatable {
    case terminal
    case consoleHolder
    case wayland
  }

  /// What it runs: a restart runs the same.
  let command: [String]
  let kind: Kind
  var isConsoleHolder: Bool { kind == .consoleHolder }
  /// Its environment, when not the daemon's (WAYLAND_DISPLAY): a restart runs with the same.
  let environment: [String]?
  let pid: pid_t
  /// When it was started (monotonic ns): how long it ran decides the backoff.
  let startedAt = monotonicNanoseconds()
  private(set) var isReady = false
  private let loop: EventLoop
  /// The ready pipe's read end and its watch, until the byte or the end.
  private var ready: (fd: Int32, watch: EventLoop.Token)?

  init(
    command: [String], kind: Kind, environment: [String]? = nil, loop: EventLoop, onReady: @escaping () -> Void
  ) throws(SystemError) {
    self.loop = loop
    self.command = command
    self.kind = kind
    self.environment = environment
    let ready = try closeOnExecPipe()
    do {
      let name = String(command[0].split(separator: "/").last ?? "")
      pid = try ChildProcess.launch(
        command[0], arguments: [name] + command.dropFirst(), descriptors: [(parent: ready.write, child: 3)],
        environment: environment)
    } catch {
      close(ready.read)
      close(ready.write)
      throw error
    }
    close(ready.write)
    let readEnd = ready.read
    let watch = loop.watch(readEnd) { [self] in
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

  /// Stops the lock screen (SIGKILL: it ignores the polite signals by design).
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
