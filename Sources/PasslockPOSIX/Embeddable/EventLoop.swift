import Glibc

/// A single-threaded poll(2) loop: readable file descriptors, monotonic
/// timers and signals (through `SignalPipe`), each handler run on the
/// loop's thread, one at a time. passlockd's event handling: no Dispatch,
/// so no worker threads, no thread stacks, and none of its runtime faulted
/// into an otherwise idle daemon. Its time is `clock`'s: the system's, or a
/// test's ManualClock, which `advanceTime` moves (as swift-nio's
/// EmbeddedEventLoop does), so the daemon's timers are unit tests.
public final class EventLoop {
  public let clock: LoopClock

  public struct Token: Hashable, Sendable {
    let value: Int
  }

  private struct Timer {
    var deadline: UInt64
    var interval: UInt64?
    var handler: () -> Void
  }

  private var watches: [Int: (fd: Int32, handler: () -> Void)] = [:]
  private var timers: [Int: Timer] = [:]
  private var signalHandlers: [Int32: () -> Void] = [:]
  private var lastToken = 0

  public init(clock: LoopClock = SystemClock()) { self.clock = clock }

  private func newToken() -> Int {
    lastToken += 1
    return lastToken
  }

  /// Runs `handler` whenever `fd` is readable (or hung up), until cancelled.
  @discardableResult
  public func watch(_ fd: Int32, _ handler: @escaping () -> Void) -> Token {
    let token = newToken()
    watches[token] = (fd, handler)
    return Token(value: token)
  }

  /// Runs `handler` once, `milliseconds` from now (monotonic: time asleep
  /// does not count, as with Dispatch's `.now()`), then every `repeating`
  /// milliseconds when given.
  @discardableResult
  public func after(milliseconds: Int64, repeating: Int64? = nil, _ handler: @escaping () -> Void) -> Token {
    after(microseconds: milliseconds * 1000, repeating: repeating.map { $0 * 1000 }, handler)
  }

  @discardableResult
  public func after(microseconds: Int64, repeating: Int64? = nil, _ handler: @escaping () -> Void) -> Token {
    let token = newToken()
    timers[token] = Timer(
      deadline: clock.monotonicNanoseconds + UInt64(max(0, microseconds)) * 1000,
      interval: repeating.map { UInt64(max(1, $0)) * 1000 }, handler: handler)
    return Token(value: token)
  }

  /// Stops a watch or a timer; a handler cancelled by an earlier one in the
  /// same round does not run.
  public func cancel(_ token: Token?) {
    guard let token else { return }
    watches[token.value] = nil
    timers[token.value] = nil
  }

  /// Runs `handler` after `signal` arrives. `SignalPipe` must watch it: the
  /// handler then runs here, not in signal context.
  public func onSignal(_ signal: Int32, _ handler: @escaping () -> Void) {
    signalHandlers[signal] = handler
  }

  /// Waits for the next events (at most `limit` ms when given) and runs their handlers.
  public func runOnce(waitingAtMost limit: Int32? = nil) {
    let watched = watches.sorted { $0.key < $1.key }
    var fds = watched.map { pollfd(fd: $0.value.fd, events: Int16(POLLIN), revents: 0) }
    if !signalHandlers.isEmpty && SignalPipe.readEnd >= 0 {
      fds.append(pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0))
    }
    var timeout = timeoutToNextTimer()
    if let limit, timeout < 0 || limit < timeout { timeout = limit }
    let ready = poll(&fds, nfds_t(fds.count), timeout)
    if ready < 0 && errno != EINTR { fatalError("poll: \(SystemError("poll"))") }
    if ready > 0 {
      for (index, entry) in watched.enumerated() where fds[index].revents != 0 {
        // An earlier handler may have cancelled this one.
        if let watch = watches[entry.key], watch.fd == entry.value.fd { watch.handler() }
      }
      if fds.count > watched.count, fds[watched.count].revents != 0 {
        for signal in Set(SignalPipe.drain()) { signalHandlers[signal]?() }
      }
    }
    runDueTimers()
  }

  public func run() -> Never {
    while true { runOnce() }
  }

  /// poll's timeout: rounded up, so a timer never fires early.
  private func timeoutToNextTimer() -> Int32 {
    guard let next = timers.values.map({ $0.deadline }).min() else { return -1 }
    let now = clock.monotonicNanoseconds
    guard next > now else { return 0 }
    return Int32(min(UInt64(Int32.max), (next - now + 999_999) / 1_000_000))
  }

  /// For a test on a ManualClock: moves it on by `milliseconds` and runs
  /// every timer due by then, in order (no descriptor is polled).
  public func advanceTime(byMilliseconds milliseconds: Int64) {
    guard let manual = clock as? ManualClock else { preconditionFailure("advanceTime needs a ManualClock") }
    let target = manual.monotonicNanoseconds + UInt64(milliseconds) * 1_000_000
    // Timer by timer, so that one scheduled by a handler runs if it is due too.
    while let next = timers.values.map({ $0.deadline }).min(), next <= target {
      manual.set(monotonicNanoseconds: max(manual.monotonicNanoseconds, next))
      runDueTimers()
    }
    manual.set(monotonicNanoseconds: target)
  }

  private func runDueTimers() {
    let now = clock.monotonicNanoseconds
    let due = timers.filter { $0.value.deadline <= now }.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
    for (token, timer) in due {
      guard timers[token] != nil else { continue }  // cancelled by an earlier handler
      if let interval = timer.interval {
        // Behind by more than a period (after a stall): the next one is a period from now.
        let next = timer.deadline + interval
        timers[token]!.deadline = next > now ? next : now + interval
      } else {
        timers[token] = nil
      }
      timer.handler()
    }
  }
}
