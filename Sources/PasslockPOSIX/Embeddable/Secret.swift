import CLinux
import Glibc

/// Keeps this process out of reach of the user's other processes: not
/// dumpable (PR_SET_DUMPABLE 0), so no core file holds a passcode, and no
/// process of the same user can ptrace it or open its descriptors through
/// /proc/PID/fd (a lock screen's pipes to the gatekeeper carry the verdict
/// that unlocks). Its /proc entries become root's; their cmdline, stat and
/// status stay readable to everyone, as for any process.
public func keepOutOfSameUserReach() { _ = passlock_set_not_dumpable() }

/// A passcode or password in memory: one fixed, mlocked buffer that is zeroed
/// on every path (deinit runs on success, error and early return alike). It is
/// never turned into a `String`, never copied (`~Copyable`) and never logged.
public struct Secret: ~Copyable {
  public static let capacity = 512

  private let storage: UnsafeMutableRawBufferPointer
  public private(set) var count = 0

  public init() {
    storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Secret.capacity, alignment: 16)
    storage.initializeMemory(as: UInt8.self, repeating: 0)
    // Best effort: keep it out of swap. Failure (RLIMIT_MEMLOCK) is not fatal.
    _ = mlock(storage.baseAddress, storage.count)
  }

  deinit {
    explicit_bzero(storage.baseAddress!, storage.count)
    _ = munlock(storage.baseAddress, storage.count)
    storage.deallocate()
  }

  public var isEmpty: Bool { count == 0 }

  /// Appends one byte; false when full (one byte is kept for the C string's NUL).
  @discardableResult
  public mutating func append(_ byte: UInt8) -> Bool {
    guard count < Secret.capacity - 1 else { return false }
    storage[count] = byte
    count += 1
    return true
  }

  public mutating func removeLast() {
    guard count > 0 else { return }
    count -= 1
    storage[count] = 0
  }

  public mutating func clear() {
    explicit_bzero(storage.baseAddress!, count)
    count = 0
  }

  /// Becomes a copy of `other` (the old bytes are wiped first).
  public mutating func replace(with other: borrowing Secret) {
    clear()
    other.withBytes { for byte in $0 { append(byte) } }
  }

  /// The bytes, valid only inside `body`.
  public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(rebasing: storage[..<count]))
  }

  /// The bytes as a NUL-terminated C string, for crypt(3) and PAM.
  public func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
    storage[count] = 0
    return try body(storage.baseAddress!.assumingMemoryBound(to: CChar.self))
  }

  /// Fills the secret from `fd` with exactly `length` bytes (for protocol frames).
  public mutating func read(from fd: FileDescriptor, length: Int) throws(SystemError) -> Bool {
    guard length < Secret.capacity else { throw SystemError("read", errno: EMSGSIZE) }
    clear()
    let complete = try fd.readExactly(into: UnsafeMutableRawBufferPointer(rebasing: storage[..<length]))
    count = complete ? length : 0
    return complete
  }

  /// Compares with `other` in time that depends only on the lengths.
  public func constantTimeEquals(_ other: UnsafeRawBufferPointer) -> Bool {
    withBytes { mine in ConstantTime.equals(mine, other) }
  }
}

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
  public static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
    let n = max(a.count, b.count)
    for i in 0..<n {
      let x = i < a.count ? a[i] : 0
      let y = i < b.count ? b[i] : 0
      difference |= x ^ y
    }
    return difference == 0 && a.count == b.count
  }

  public static func equals(_ a: String, _ b: String) -> Bool {
    var a = a
    var b = b
    return a.withUTF8 { x in b.withUTF8 { y in equals(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
  }
}
