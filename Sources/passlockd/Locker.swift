import Dispatch
import Glibc
import PasslockPOSIX

/// One running lock for a session: `passlock lock --tty DEVICE --ready-fd 3`
/// (direct mode) or `passlock-vt --vt N --ready-fd 3` (VT mode). Either writes
/// one byte on fd 3 once the first frame is on screen, and exits 0 only
/// after a real unlock.
@MainActor
final class Locker {
  let sessionID: String
  let pid: pid_t
  /// When it was started (monotonic ns): how long it ran decides the backoff.
  let startedAt = monotonicNanoseconds()
  private(set) var isReady = false
  private var readySource: DispatchSourceRead?

  init(sessionID: String, command: [String], onReady: @escaping @MainActor () -> Void) throws(SystemError) {
    self.sessionID = sessionID
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
    let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .main)
    source.setEventHandler { [weak self] in
      MainActor.assumeIsolated {
        var byte: UInt8 = 0
        let n = read(readEnd, &byte, 1)
        self?.readySource?.cancel()
        if n == 1, let self {
          self.isReady = true
          onReady()
        }
      }
    }
    source.setCancelHandler { close(readEnd) }
    readySource = source
    source.resume()
  }

  /// Stops the overlay (SIGKILL: it ignores the polite signals by design).
  func kill() {
    readySource?.cancel()
    _ = Glibc.kill(pid, SIGKILL)
  }

  func forget() { readySource?.cancel() }
}
