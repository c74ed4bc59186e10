import CLinux
import Glibc

/// An open file descriptor (open(2), read(2), write(2), close(2)). Failures of
/// the environment throw `SystemError`; EBADF is our own bug and traps.
public struct FileDescriptor: Sendable, Equatable {
  public let rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let standardInput = FileDescriptor(rawValue: 0)
  public static let standardOutput = FileDescriptor(rawValue: 1)
  public static let standardError = FileDescriptor(rawValue: 2)

  /// open(2); O_CLOEXEC is always added.
  public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
    let fd = retryingInterrupts { passlock_open(path, flags | O_CLOEXEC, mode) }
    guard fd >= 0 else { throw SystemError("open", path: path) }
    return FileDescriptor(rawValue: fd)
  }

  /// openat(2) relative to this directory; O_CLOEXEC is always added.
  public func openAt(_ name: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
    let fd = retryingInterrupts { passlock_openat(rawValue, name, flags | O_CLOEXEC, mode) }
    guard fd >= 0 else { throw SystemError("open", path: name) }
    return FileDescriptor(rawValue: fd)
  }

  /// close(2), never retried: after EINTR the descriptor is already gone on Linux.
  public func close() {
    if Glibc.close(rawValue) == -1 && errno == EBADF { fatalError("close: bad file descriptor \(rawValue)") }
  }

  /// read(2) once; 0 means end of file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
    let n = retryingInterrupts { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    guard n >= 0 else { throw SystemError("read") }
    return n
  }

  /// Reads exactly `buffer.count` bytes; false if the stream ended first.
  public func readExactly(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Bool {
    var done = 0
    while done < buffer.count {
      let n = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
      if n == 0 { return false }
      done += n
    }
    return true
  }

  /// Reads to end of file, at most `limit` bytes (more is an error: EFBIG).
  public func readAll(limit: Int = 1 << 16) throws(SystemError) -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = try chunk.withUnsafeMutableBytes { buffer in
        Result { () throws(SystemError) in try read(into: buffer) }
      }.get()
      if n == 0 { return result }
      result += chunk[..<n]
      if result.count > limit { throw SystemError("read", errno: EFBIG) }
    }
  }

  /// Writes all of `bytes`, continuing after short writes.
  public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
    var done = 0
    while done < bytes.count {
      let n = retryingInterrupts { Glibc.write(rawValue, bytes.baseAddress! + done, bytes.count - done) }
      guard n >= 0 else { throw SystemError("write") }
      done += n
    }
  }

  public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
    try bytes.withUnsafeBytes { buffer in Result { () throws(SystemError) in try writeAll(buffer) } }.get()
  }

  public func writeAll(_ text: String) throws(SystemError) {
    try writeAll(Array(text.utf8))
  }

  public func sync(path: String? = nil) throws(SystemError) {
    guard retryingInterrupts({ fsync(rawValue) }) == 0 else { throw SystemError("fsync", path: path) }
  }

  /// fchown(2).
  public func changeOwner(_ owner: uid_t, group: gid_t) throws(SystemError) {
    guard fchown(rawValue, owner, group) == 0 else { throw SystemError("fchown") }
  }

  /// fchmod(2).
  public func changeMode(_ mode: mode_t) throws(SystemError) {
    guard fchmod(rawValue, mode) == 0 else { throw SystemError("fchmod") }
  }

  /// poll(2): readable (or hung up) within `milliseconds`. Looked at once
  /// even with none left: an answer already there counts.
  public func becomesReadable(withinMilliseconds milliseconds: Int64) -> Bool {
    var request = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
    let deadline = Int64(monotonicNanoseconds() / 1_000_000) + max(0, milliseconds)
    while true {
      let left = max(0, deadline - Int64(monotonicNanoseconds() / 1_000_000))
      let n = poll(&request, 1, Int32(min(left, Int64(Int32.max))))
      if n < 0 && errno == EINTR { continue }
      return n == 1
    }
  }

  public func status() throws(SystemError) -> stat {
    var st = stat()
    guard fstat(rawValue, &st) == 0 else { throw SystemError("fstat") }
    return st
  }

  public var isTerminal: Bool { isatty(rawValue) == 1 }
}

/// Writes text to standard error, ignoring failures (there is nowhere to report them).
public func printError(_ text: String) {
  try? FileDescriptor.standardError.writeAll(text)
}

/// Writes text to standard output. C's `stdout` is off limits in Swift 6 mode.
public func printOut(_ text: String) {
  try? FileDescriptor.standardOutput.writeAll(text)
}
