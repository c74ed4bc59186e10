import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

// The lock screens the holder runs, and what it waits for before a lock
// stands: the first frame and its own gatekeeper's answer, both bounded.

/// Starts one lock screen on the lock VT; returns it and its ready pipe's read end.
func startLockScreen(on tty: String, graceMilliseconds: Int32? = nil) throws(HolderError) -> (pid: pid_t, ready: Int32) {
  let ready: (read: Int32, write: Int32)
  do { ready = try closeOnExecPipe() } catch { throw .system(SystemError("pipe", errno: error.errno)) }
  do {
    let pid = try LockScreenRunner.start(tty: tty, readyPipe: ready.write, graceMilliseconds: graceMilliseconds)
    close(ready.write)
    currentLockScreen = pid
    return (pid, ready.read)
  } catch {
    close(ready.read)
    close(ready.write)
    throw error
  }
}

/// The store's status from the gatekeeper, asked by the holder itself over
/// pipes only root-run processes hold (the user cannot reach them through
/// /proc). The lock screen may draw its first frame from its cached status,
/// so the holder asks for itself: when the gatekeeper *says* nothing could
/// unlock (no passcode, a gatekeeper that cannot work here), the console is
/// given back at once and the caller told why. Anything that is no answer
/// (the gatekeeper killed, stopped, not started) locks all the same
/// (StatusReading): the lock screen asks again, and only its accepted
/// verdict unlocks.
struct StatusCheck {
  let request: Result<PendingRequest, ClientError>

  init() {
    // The test knob PASSLOCK_AUTH is root's only, as for the lock screen.
    let gatekeeper = GatekeeperClient.locate(trustingEnvironment: getuid() == 0)
    // As the caller: a program named passlock-auth beside a hard link of
    // this one (where fs.protected_hardlinks is off) must not run as root.
    do { request = .success(try gatekeeper.start(.status, environment: LockScreenRunner.environment(), asCaller: true)) } catch {
      request = .failure(error)
    }
  }

  /// Why no lock screen could unlock, as the gatekeeper said it, or nil
  /// when one could or the gatekeeper gave no answer by `deadline`.
  func refusal(by deadline: Double) -> String? {
    if case .success(let pending) = request, !readable(pending.output.rawValue, by: deadline) {
      pending.cancel()
      return nil  // stopped or stuck: no answer, the lock stands
    }
    let reading: StatusReading
    do throws(ClientError) { reading = StatusReading(try request.get().finish { _, _, _ in false }) } catch {
      reading = StatusReading(error)
    }
    return reading.locks ? nil : reading.problem
  }

  /// Ends the request (a failure path that no longer needs its answer).
  func cancel() { if case .success(let pending) = request { pending.cancel() } }
}

/// Whether `fd` is readable (or hung up) by `deadline` (monotonic seconds).
/// Looked at once even when the deadline has passed: an answer that came
/// meanwhile counts (a late frame is not blamed on a gatekeeper that answered).
func readable(_ fd: Int32, by deadline: Double) -> Bool {
  FileDescriptor(rawValue: fd).becomesReadable(withinMilliseconds: Int64(((deadline - monotonicSeconds()) * 1000).rounded(.up)))
}

/// Reaps lock screen `pid`: its wait status (nil if waitpid cannot report
/// one). The SIGUSR1 relay forgets it first: once reaped, its pid may be
/// anyone's.
func reapLockScreen(_ pid: pid_t) -> Int32? {
  if currentLockScreen == pid { currentLockScreen = 0 }
  return waitStatus(of: pid)
}

/// Ends a lock screen that has not exited, and reaps it.
func stopLockScreen(_ pid: pid_t) {
  kill(pid, SIGKILL)
  _ = reapLockScreen(pid)
}

/// Waits for a lock screen's first frame until `deadline`; one that exited
/// first is reaped.
func waitForFrame(_ lockScreen: (pid: pid_t, ready: Int32), by deadline: Double) -> ConsoleLockSequence.FrameOutcome {
  defer { close(lockScreen.ready) }
  guard readable(lockScreen.ready, by: deadline) else { return .late }
  var byte: UInt8 = 0
  while true {
    let n = read(lockScreen.ready, &byte, 1)
    if n == -1 && errno == EINTR { continue }
    if n == 1 { return .drawn }
    return .exited(status: exitCode(fromWaitStatus: reapLockScreen(lockScreen.pid) ?? -1))
  }
}
