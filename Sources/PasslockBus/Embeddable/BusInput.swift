import CLinux
import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// The receiving side of the bus socket: recvmsg(2), the descriptors passed
/// with the bytes, and framing into messages.
///
/// Anyone on the system bus may send us unicast signals carrying descriptors,
/// so every read is parsed as soon as it arrives: each message is offered to
/// `take`, and the descriptors of a message it does not keep (and of one
/// that does not parse) are closed before the next read. What is held between
/// reads is at most the descriptors of one message not yet complete, and
/// never more than `descriptorCap`. A read whose descriptors did not all
/// arrive (MSG_CTRUNC: the cap, or the process out of descriptors) costs
/// only the message they came with: that is not a lost connection.
///
/// Which message a descriptor belongs to: the kernel ends a read at the
/// buffer that carried descriptors, and dbus-daemon sends a message's
/// descriptors with the message's first bytes. So they belong to the one
/// message with UNIX_FDS > 0 that starts within that read's bytes.
final class BusInput {
  let fd: FileDescriptor
  /// The most descriptors held at once (a read's beyond it are closed).
  let descriptorCap: Int

  /// Bytes received but not yet framed; `base` is the stream offset of the first.
  private var bytes: [UInt8] = []
  private var base = 0
  private var batches: [Batch] = []
  private var receiveBuffer = [UInt8](repeating: 0, count: 65536)

  /// Descriptors that came with the bytes at stream offsets start..<end.
  private struct Batch {
    var start: Int
    var end: Int
    var fds: [Int32]
    /// False when some did not arrive (MSG_CTRUNC) or went over the cap.
    var whole: Bool
  }

  init(fd: FileDescriptor, descriptorCap: Int = 256) {
    self.fd = fd
    self.descriptorCap = descriptorCap
  }

  deinit { for batch in batches { closeAll(batch.fds) } }

  /// Descriptors held now (waiting for the rest of their message).
  var heldDescriptors: Int { batches.reduce(0) { $0 + $1.fds.count } }

  enum State { case open, closed }

  /// Reads what the socket has (it is non-blocking; at most `reads` reads, so
  /// a flood does not keep the caller from its other work) and hands every
  /// complete message to `take`. `.closed` at the end of the connection or
  /// when the stream can no longer be framed.
  func receive(reads: Int = 64, _ take: (ReceivedMessage) -> Void) -> State {
    for _ in 0..<reads {
      // Room for the 253 descriptors (SCM_MAX_FD) one read can carry.
      let received: UnixSocket.Received
      switch UnixSocket.receive(fd, into: &receiveBuffer, descriptorRoom: 253) {
      case .success(let got): received = got
      case .failure(let error): return error.errno == EAGAIN ? .open : .closed
      }
      if received.count == 0 {
        closeAll(received.descriptors)
        return .closed
      }
      let start = base + bytes.count
      bytes += receiveBuffer[..<received.count]
      if !received.descriptors.isEmpty || received.truncated {
        var batch = Batch(start: start, end: start + received.count, fds: received.descriptors, whole: !received.truncated)
        let room = max(0, descriptorCap - heldDescriptors)
        if batch.fds.count > room {
          closeAll(Array(batch.fds[room...]))
          batch.fds.removeSubrange(room...)
          batch.whole = false
        }
        batches.append(batch)
      }
      guard frame(take) else { return .closed }
    }
    return .open
  }

  /// Parses every complete message in `bytes`; false when the stream breaks
  /// the protocol (nothing after that point can be framed).
  private func frame(_ take: (ReceivedMessage) -> Void) -> Bool {
    var offset = 0
    defer {
      bytes.removeFirst(offset)
      base += offset
      // Descriptors that came with bytes already framed and that no message
      // claimed are nobody's.
      let next = base
      for batch in batches where batch.end <= next { closeAll(batch.fds) }
      batches.removeAll { $0.end <= next }
    }
    while true {
      let length: Int
      do {
        guard let framed = try BusWireFormat.messageLength(bytes, from: offset), bytes.count - offset >= framed else { return true }
        length = framed
      } catch {
        return false
      }
      let start = base + offset
      let message = try? BusMessage(parsing: bytes[offset..<offset + length])
      offset += length
      guard let message else {
        // Whatever it carried is closed with the batch it came in.
        continue
      }
      var descriptors: [Int32] = []
      if message.descriptorCount > 0 {
        guard let index = batches.firstIndex(where: { $0.start <= start && start < $0.end }) else { continue }
        let batch = batches.remove(at: index)
        guard batch.whole, batch.fds.count == message.descriptorCount else {
          closeAll(batch.fds)
          continue  // its descriptors did not all arrive: it cannot be read
        }
        descriptors = batch.fds
      }
      take(ReceivedMessage(message, descriptors: descriptors))  // one not kept closes its descriptors as it goes
    }
  }

  private func closeAll(_ fds: [Int32]) { for descriptor in fds { close(descriptor) } }
}

/// A message and the descriptors that came with it, which it owns: they are
/// closed when it goes (BusMessage itself holds only their indices).
final class ReceivedMessage {
  let message: BusMessage
  private let descriptors: [Int32]

  init(_ message: BusMessage, descriptors: [Int32]) {
    self.message = message
    self.descriptors = descriptors
  }

  deinit { for fd in descriptors { close(fd) } }

  /// The message's descriptor at `index` (as `unixFD()` read it), duplicated
  /// close-on-exec so that it outlives the message.
  func duplicate(_ index: Int) throws(BusError) -> Int32 {
    guard index < descriptors.count else { throw .malformed("descriptor index out of range") }
    let copy = passlock_fcntl(descriptors[index], F_DUPFD_CLOEXEC, 3)
    guard copy >= 0 else { throw BusError.system("dup", errno: errno) }
    return copy
  }
}
