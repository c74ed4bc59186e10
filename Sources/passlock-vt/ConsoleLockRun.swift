import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// Carries out ConsoleLockSequence's effects over the console (Console,
/// Holder, the lock screens, the holder's own status check) and reports what
/// happened back to it as events. The order is the sequence's to decide
/// (PasslockCore/ConsoleLockSequence.swift); nothing here chooses it.
final class ConsoleLockRun {
  typealias Effect = ConsoleLockSequence.Effect

  private var sequence = ConsoleLockSequence()
  let console: Console
  let prepared: Holder.Prepared
  let caller: uid_t
  /// The logind session the lock is for (non-root callers), checked again once locked.
  let checkedSession: ActiveSession?
  let sessionVT: Int32
  let readyFD: Int32?
  /// An idle lock's grace (passlockd's): the first lock screen's only. One
  /// that replaces it never has one: killing the lock screen must not open
  /// the console to the next key.
  let graceMilliseconds: Int32?
  /// The holder's first frame, painted as soon as switching is locked
  /// (FirstFrame); nil when there is none or it is on the VT already.
  let frameOnceLocked: FirstFrame.Pending?

  private var holder: Holder?
  /// The running lock screen and its ready pipe.
  private var lockScreen: (pid: pid_t, ready: Int32)?
  /// When the running lock screen started (monotonic seconds): how long
  /// it ran decides the restart's delay.
  private var lockScreenStartedAt = 0.0
  private var check: StatusCheck?
  private var switches: SwitchWatch?
  /// What Holder.lock threw (`.abandon(nil)` exits with it).
  private var lockError: HolderError?

  init(
    console: Console, prepared: Holder.Prepared, caller: uid_t, checkedSession: ActiveSession?, sessionVT: Int32,
    readyFD: Int32?, graceMilliseconds: Int32?, frameOnceLocked: FirstFrame.Pending?
  ) {
    self.console = console
    self.prepared = prepared
    self.caller = caller
    self.checkedSession = checkedSession
    self.sessionVT = sessionVT
    self.readyFD = readyFD
    self.graceMilliseconds = graceMilliseconds
    self.frameOnceLocked = frameOnceLocked
  }

  /// Locks, supervises, and exits: 0 after a real unlock, the refusal's
  /// status when the lock does not stand.
  func run(painted: Bool) -> Never {
    run(sequence.handle(.prepared(painted: painted, stale: prepared.stale != nil)))
    // Every path of the sequence ends in an exit; should one not, nothing is
    // given back without a verdict: a lock that stands stays, as when the
    // holder is killed (root's --release undoes it).
    guard holder != nil else {
      prepared.abandon(console)
      fail(.refused("the console lock sequence ended before the lock; nothing was locked"))
    }
    fail(.refused("the console lock sequence ended without a verdict; the console stays locked (passlock-vt --release as root)"))
  }

  /// Carries out `effects` in order; the effects of an event one of them
  /// reports come before the rest (a queue, not recursion: the supervision
  /// goes on for as long as the lock does).
  private func run(_ effects: [Effect]) {
    var queue = effects
    while !queue.isEmpty {
      let effect = queue.removeFirst()
      queue.insert(contentsOf: perform(effect), at: 0)
    }
  }

  /// One effect; what the sequence answers to what it reported.
  private func perform(_ effect: Effect) -> [Effect] {
    switch effect {
    case .startLockScreen:
      do {
        lockScreen = try startLockScreen(on: prepared.tty, graceMilliseconds: graceMilliseconds)
        lockScreenStartedAt = monotonicSeconds()
        return sequence.handle(.lockScreenStarted)
      } catch {
        return sequence.handle(.lockScreenDidNotStart(error.description))
      }
    case .startStatusCheck:
      check = StatusCheck()
      return []
    case .cancelStatusCheck:
      check?.cancel()
      check = nil
      return []
    case .raisePriority:
      SwitchPriority.raise()
      return []
    case .lowerPriority:
      SwitchPriority.lower()
      return []
    case .lockSwitching:
      // Opened before the lock: a switch right after it is seen, not missed.
      switches = SwitchWatch()
      do { holder = try Holder.lock(prepared, console: console, user: caller) } catch {
        lockError = error
        return sequence.handle(.lockFailed)
      }
      // The session is off screen: now the frame (its lock screen starts after it).
      if let frameOnceLocked { FirstFrame.paint(frameOnceLocked, on: prepared.fd) }
      return sequence.handle(.switchingLocked)
    case .settle:
      // Asked for only once switching is locked: there is a holder.
      guard let holder else { return sequence.handle(.lockFailed) }
      do { try holder.settle() } catch {
        lockError = error
        self.holder = nil  // undone: nothing to give back
        return sequence.handle(.lockFailed)
      }
      return sequence.handle(.settled)
    case .checkSessionAgain:
      return sequence.handle(.sessionChecked(sessionChanged()))
    case .awaitFirstFrameAndStatus:
      return awaitFirstFrameAndStatus()
    case .stopLockScreen:
      if let lockScreen { stopLockScreen(lockScreen.pid) }
      lockScreen = nil
      return []
    case .abandon(let refusal):
      prepared.abandon(console)  // once nothing has the VT open, it can be freed
      fail(refusal.map(Self.error) ?? lockError ?? .refused("the console could not be locked"))
    case .giveBack(let refusal):
      holder?.end(closing: prepared.fd)
      fail(Self.error(refusal))
    case .reportReady:
      // The first frame is on screen and a passcode is set: the daemon may let the machine sleep.
      if let readyFD {
        var byte: UInt8 = 1
        _ = write(readyFD, &byte, 1)
        close(readyFD)
      }
      return []
    case .supervise:
      guard let lockScreen, let holder else { return sequence.handle(.lockScreenExited(status: -1, ranForSeconds: 0)) }
      // Only an exit 0 that waitpid saw unlocks; a wait that fails is a failure.
      let status = (switches.map { $0.supervise(lockScreen.pid, holder: holder) } ?? reapLockScreen(lockScreen.pid)) ?? -1
      self.lockScreen = nil
      return sequence.handle(.lockScreenExited(status: status, ranForSeconds: monotonicSeconds() - lockScreenStartedAt))
    case .showEmergency:
      holder?.emergency(prepared.fd)
      return []
    case .restartLockScreen(let milliseconds):
      if milliseconds > 0 { usleep(UInt32(milliseconds) * 1000) }
      // Keys left from the lock screen that ended, or typed at the emergency
      // text, are not the next one's passcode.
      tcflush(prepared.fd, TCIFLUSH)
      do {
        let started = try startLockScreen(on: prepared.tty)
        // Only the first lock screen's frame is waited for: a later one is
        // supervised from its start (its ready byte finds the pipe closed,
        // which it ignores).
        close(started.ready)
        lockScreen = (started.pid, -1)
        lockScreenStartedAt = monotonicSeconds()
        return sequence.handle(.lockScreenStarted)
      } catch {
        return sequence.handle(.lockScreenDidNotStart(error.description))
      }
    case .unlock:
      holder?.end(closing: prepared.fd)
      exit(0)
    }
  }

  /// The first frame, then the status answer, within one bound.
  private func awaitFirstFrameAndStatus() -> [Effect] {
    let deadline = monotonicSeconds() + ConsoleLockSequence.lockStandsWithinSeconds
    var effects: [Effect] = []
    if let lockScreen {
      let outcome = waitForFrame(lockScreen, by: deadline)
      if case .exited = outcome { self.lockScreen = nil }  // reaped
      effects += sequence.handle(.firstFrame(outcome))
    }
    // Used up here, whatever it says (a used-up request is reaped, not
    // cancelled). No check at all is no answer: the lock stands.
    let refusal = check.map { $0.refusal(by: deadline) } ?? nil
    check = nil
    return effects + sequence.handle(.statusAnswered(refusal: refusal))
  }

  /// Why the console may no longer be locked for the caller, now that
  /// switching is locked: they could stop this process (it is their real
  /// uid) between the first checks and the lock.
  private func sessionChanged() -> ConsoleLockSequence.Refusal? {
    guard let session = checkedSession else { return nil }
    if holder?.originalVT != sessionVT || ActiveSession.session(session.id) != session {
      return ConsoleLockSequence.Refusal("the session on screen changed while locking; refusing to lock")
    }
    return sharedSeat(caller).map { ConsoleLockSequence.Refusal($0.description, status: $0.exitStatus) }
  }

  /// The holder's error for a refusal, keeping its exit status.
  static func error(_ refusal: ConsoleLockSequence.Refusal) -> HolderError {
    switch refusal.status {
    case .sharedSeat: return .sharedSeat(refusal.reason)
    case .stuck: return .stuck(refusal.reason)
    case .usage: return .usage(refusal.reason)
    case .unlocked, .refused: return .refused(refusal.reason)
    }
  }
}
