import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// The bus's SASL exchange before any message: EXTERNAL as our uid, then
/// asking for descriptor passing (logind's Inhibit answers with one). Every
/// line within a deadline: a bus that never answers must not hold up the
/// daemon's start (or a PAM host's login) for ever. Sent without SIGPIPE: a
/// bus that drops the connection must not kill a host that does not ignore it.
enum BusAuthentication {
  static func run(on fd: FileDescriptor, timeoutMicroseconds: UInt64) throws(BusError) {
    let deadline = monotonicNanoseconds() + timeoutMicroseconds * 1000
    let uid = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
    try send("\0AUTH EXTERNAL \(uid)\r\n", on: fd)
    guard try line(from: fd, by: deadline).hasPrefix("OK ") else {
      throw BusError(call: "authenticate", code: -EACCES, message: "the bus refused EXTERNAL")
    }
    try send("NEGOTIATE_UNIX_FD\r\n", on: fd)
    guard try line(from: fd, by: deadline).hasPrefix("AGREE_UNIX_FD") else {
      throw BusError(call: "authenticate", code: -EPROTO, message: "the bus does not pass descriptors")
    }
    try send("BEGIN\r\n", on: fd)
  }

  private static func send(_ text: String, on fd: FileDescriptor) throws(BusError) {
    // A few dozen bytes into a new connection's empty buffer: one send.
    let bytes = Array(text.utf8)
    switch UnixSocket.send(fd, bytes[...]) {
    case .success(let n) where n == bytes.count: return
    case .success: throw BusError(call: "authenticate", code: -EAGAIN, message: "the bus took part of a line")
    case .failure(let error): throw BusError.system("authenticate", errno: error.errno)
    }
  }

  /// One line, read a byte at a time (nothing after it is the exchange's).
  private static func line(from fd: FileDescriptor, by deadline: UInt64) throws(BusError) -> String {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while line.count < 4096 {
      let now = monotonicNanoseconds()
      guard now < deadline else { throw BusError(call: "authenticate", code: -ETIMEDOUT, message: "the bus did not answer") }
      var readable = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
      if poll(&readable, 1, Int32((deadline - now) / 1_000_000 + 1)) == 0 { continue }
      let n = retryingInterrupts { Glibc.read(fd.rawValue, &byte, 1) }
      guard n == 1 else { throw n == 0 ? BusError(call: "authenticate", code: -ECONNRESET) : .system("authenticate", errno: errno) }
      if byte == UInt8(ascii: "\n") {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
      }
      line.append(byte)
    }
    throw BusError(call: "authenticate", code: -EPROTO, message: "line too long")
  }
}

extension BusError {
  /// A failed system call, worded by strerror.
  static func system(_ call: String, errno code: Int32) -> BusError {
    BusError(call: call, code: -code, message: String(cString: strerror(code)))
  }
}
