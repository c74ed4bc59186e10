import Glibc
import PasslockPOSIX
import Testing

@testable import PasslockBus

/// The bus socket's receiving side over a real socketpair: descriptors a
/// peer passes are closed as soon as their message is dropped, never more
/// than the cap are held, and neither is taken for a lost connection.
@Suite(.serialized) final class BusInputTests {
  let ours: Int32
  let peer: Int32
  /// The file the passed descriptors are copies of: open descriptors of it
  /// are this test's, whatever other suites open meanwhile.
  let marker = "/tmp/passlock-bus-input-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

  init() throws {
    close(open(marker, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600))
    var pair: [Int32] = [0, 0]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
    ours = pair[0]
    peer = pair[1]
    _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
  }

  deinit {
    close(ours)
    close(peer)
    unlink(marker)
  }

  /// Sends `bytes` with `count` descriptors (copies of /dev/null) in one sendmsg, as dbus-daemon does.
  func send(_ bytes: [UInt8], descriptors count: Int) {
    let null = open(marker, O_RDONLY | O_CLOEXEC)
    defer { close(null) }
    var fds = [Int32](repeating: null, count: count)
    var control = [UInt8](repeating: 0, count: 4096)
    var data = bytes
    data.withUnsafeMutableBytes { dataBytes in
      control.withUnsafeMutableBytes { controlBytes in
        var vector = iovec(iov_base: dataBytes.baseAddress, iov_len: dataBytes.count)
        withUnsafeMutablePointer(to: &vector) { vectorPointer in
          var header = msghdr()
          header.msg_iov = vectorPointer
          header.msg_iovlen = 1
          if count > 0 {
            let length = MemoryLayout<cmsghdr>.size + count * 4
            header.msg_control = controlBytes.baseAddress
            header.msg_controllen = (length + 7) / 8 * 8
            let cmsg = controlBytes.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
            cmsg.pointee.cmsg_len = length
            cmsg.pointee.cmsg_level = SOL_SOCKET
            cmsg.pointee.cmsg_type = Int32(SCM_RIGHTS)
            fds.withUnsafeBytes {
              controlBytes.baseAddress!.advanced(by: MemoryLayout<cmsghdr>.size).copyMemory(from: $0.baseAddress!, byteCount: count * 4)
            }
          }
          #expect(sendmsg(peer, &header, 0) == dataBytes.count)
        }
      }
    }
    _ = fds
  }

  /// Descriptors of `marker` this process holds.
  func openDescriptors() -> Int {
    (Directory.names("/proc/self/fd") ?? []).filter { Directory.linkTarget("/proc/self/fd/" + $0) == marker }.count
  }

  @Test func descriptorsOfADroppedMessageAreClosedAtOnce() {
    let before = openDescriptors()
    let input = BusInput(fd: FileDescriptor(rawValue: ours))
    // In bursts, as a flood reaches a daemon that keeps reading: 300 × 16.
    var seen = 0
    for _ in 0..<15 {
      for _ in 0..<20 { send(BusMessageTests.signal(signature: "", body: [], descriptors: 16), descriptors: 16) }
      #expect(input.receive({ _ in seen += 1 }) == .open)
      #expect(input.heldDescriptors == 0 && openDescriptors() == before, "none outlive their read")
    }
    #expect(seen == 300, "every message was framed")
    #expect(input.heldDescriptors == 0)
    #expect(openDescriptors() == before, "the 4800 descriptors were closed as their messages went")
  }

  @Test func aReadWithMoreDescriptorsThanTheCapCostsOnlyItsMessage() {
    let before = openDescriptors()
    let input = BusInput(fd: FileDescriptor(rawValue: ours), descriptorCap: 4)
    send(BusMessageTests.signal(signature: "", body: [], descriptors: 16, sender: ":1.66"), descriptors: 16)
    send(BusMessageTests.signal(signature: "", body: [], sender: ":1.67"), descriptors: 0)
    var senders: [String] = []
    #expect(input.receive({ senders.append($0.message.sender ?? "") }) == .open, "not a lost connection")
    #expect(senders == [":1.67"], "the message whose descriptors did not all arrive is dropped, the next one read")
    #expect(openDescriptors() == before, "none kept")
  }

  @Test func aKeptMessageOwnsItsDescriptorUntilItGoes() throws {
    let before = openDescriptors()
    let input = BusInput(fd: FileDescriptor(rawValue: ours))
    send(BusMessageTests.signal(signature: "h", body: [0, 0, 0, 0], descriptors: 1), descriptors: 1)
    do {
      var kept: [ReceivedMessage] = []
      #expect(input.receive({ kept.append($0) }) == .open)
      let received = try #require(kept.first)
      #expect(openDescriptors() == before + 1)
      let copy = try received.duplicate(try received.message.unixFD())
      close(copy)
    }
    #expect(openDescriptors() == before, "closed with its message")
  }

  @Test func theEndOfTheConnectionIsClosed() {
    let input = BusInput(fd: FileDescriptor(rawValue: ours))
    shutdown(peer, Int32(SHUT_WR))
    #expect(input.receive({ _ in }) == .closed)
  }
}
