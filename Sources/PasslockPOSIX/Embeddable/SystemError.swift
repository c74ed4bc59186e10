import Glibc

/// A failed system call from the environment (EACCES, ENOENT, EIO…), with the
/// call and the path it concerned, so the message can say what went wrong where.
public struct SystemError: Error, CustomStringConvertible, Sendable {
  public var call: String
  public var path: String?
  public var errno: Int32

  public init(_ call: String, path: String? = nil, errno: Int32 = lastErrorNumber()) {
    self.call = call
    self.path = path
    self.errno = errno
  }

  public var description: String {
    let reason = String(cString: strerror(errno))
    return path.map { "\(call) \($0): \(reason)" } ?? "\(call): \(reason)"
  }
}

/// errno as the last failed call left it: the default above, where the
/// parameter's own name hides the global.
public func lastErrorNumber() -> Int32 { errno }

/// Runs a system call, retrying it while it fails with EINTR. This is the only
/// place EINTR is retried; `close` must never go through it.
@inline(__always)
public func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
  while true {
    let result = call()
    if result == -1 && errno == EINTR { continue }
    return result
  }
}
