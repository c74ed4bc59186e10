import Glibc
import PasslockPOSIX
import Testing

/// passlockd's event loop: timers in order and never early, cancelling from
/// a handler, readable descriptors and signals through the signal pipe.
@Suite struct EventLoopTests {
  /// Runs the loop until `done` or two seconds pass.
  func run(_ loop: EventLoop, until done: () -> Bool) {
    let deadline = monotonicNanoseconds() + 2_000_000_000
    while !done() && monotonicNanoseconds() < deadline { loop.runOnce(waitingAtMost: 100) }
  }

  @Test func timersFireInDeadlineOrderAndNeverEarly() {
    let loop = EventLoop()
    let start = monotonicNanoseconds()
    var fired: [(Int, UInt64)] = []
    for (index, delay) in [30, 10, 20].enumerated() {
      loop.after(milliseconds: Int64(delay)) { fired.append((index, monotonicNanoseconds() - start)) }
    }
    run(loop) { fired.count == 3 }
    #expect(fired.map(\.0) == [1, 2, 0])
    for (index, elapsed) in fired { #expect(elapsed >= UInt64([30, 10, 20][index]) * 1_000_000) }
  }

  @Test func aMicrosecondDeadlineIsNotRoundedDown() {
    let loop = EventLoop()
    let start = monotonicNanoseconds()
    var elapsed: UInt64?
    loop.after(microseconds: 2_500) { elapsed = monotonicNanoseconds() - start }
    run(loop) { elapsed != nil }
    #expect(elapsed.map { $0 >= 2_500_000 } == true)
  }

  @Test func aHandlerCancelsWhatWouldRunAfterIt() {
    let loop = EventLoop()
    var ran: [String] = []
    var second: EventLoop.Token?
    loop.after(milliseconds: 5) {
      ran.append("first")
      loop.cancel(second)
    }
    second = loop.after(milliseconds: 5) { ran.append("second") }
    loop.after(milliseconds: 40) { ran.append("last") }
    run(loop) { ran.last == "last" }
    #expect(ran == ["first", "last"])
  }

  @Test func aRepeatingTimerRepeatsUntilCancelled() {
    let loop = EventLoop()
    var count = 0
    var timer: EventLoop.Token?
    timer = loop.after(milliseconds: 2, repeating: 2) {
      count += 1
      if count == 3 { loop.cancel(timer) }
    }
    var waited = false
    loop.after(milliseconds: 60) { waited = true }
    run(loop) { waited }
    #expect(count == 3)
  }

  @Test func aReadableDescriptorRunsItsHandlerUntilCancelled() throws {
    let loop = EventLoop()
    let pipe = try closeOnExecPipe()
    defer {
      close(pipe.read)
      close(pipe.write)
    }
    var reads: [UInt8] = []
    var watch: EventLoop.Token?
    watch = loop.watch(pipe.read) {
      var byte: UInt8 = 0
      if read(pipe.read, &byte, 1) == 1 { reads.append(byte) }
      if reads.count == 2 { loop.cancel(watch) }
    }
    for byte: UInt8 in [7, 8, 9] {
      var value = byte
      _ = write(pipe.write, &value, 1)
    }
    run(loop) { reads.count == 2 }
    // Cancelled: the third byte stays unread however long the loop runs.
    loop.runOnce(waitingAtMost: 20)
    #expect(reads == [7, 8])
  }

  @Test func aSignalRunsItsHandlerOnTheLoop() {
    SignalPipe.install(ignoring: [], watching: [SIGUSR2])
    let loop = EventLoop()
    var received = 0
    loop.onSignal(SIGUSR2) { received += 1 }
    kill(getpid(), SIGUSR2)
    run(loop) { received > 0 }
    #expect(received == 1)
  }
}
