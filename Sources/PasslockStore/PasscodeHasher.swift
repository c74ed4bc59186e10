import CXCrypt
import Glibc
import PasslockPOSIX

/// yescrypt hashing through libxcrypt (`crypt_gensalt_rn`, `crypt_rn`).
public enum PasscodeHasher {
  /// The slowest yescrypt cost we choose; 11 takes seconds per verify.
  public static let costs: ClosedRange<Int> = 1...11
  /// iOS tunes its passcode derivation to ~80 ms per try; so do we.
  public static let targetNanoseconds: UInt64 = 80_000_000

  /// Hashes `passcode` at `cost` with a fresh random salt.
  public static func hash(_ passcode: borrowing Secret, cost: Int) throws(HashError) -> String {
    var setting = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
    // A nil random source makes libxcrypt draw the salt from the kernel (getrandom).
    guard crypt_gensalt_rn("$y$", UInt(cost), nil, 0, &setting, Int32(setting.count)) != nil else {
      throw .gensalt(errno)
    }
    return try crypt(passcode, setting: setting)
  }

  /// Hashes at the lowest cost that takes at least `targetNanoseconds` here,
  /// starting from `minimumCost`; the cost ends up recorded in the hash string.
  public static func calibratedHash(_ passcode: borrowing Secret, minimumCost: Int = 5) throws(HashError) -> String {
    var cost = minimumCost
    while true {
      let start = monotonicNanoseconds()
      let result = try hash(passcode, cost: cost)
      if monotonicNanoseconds() - start >= targetNanoseconds || cost >= costs.upperBound { return result }
      cost += 1
    }
  }

  /// crypt(3) of `passcode` under `setting` (a salt or a full stored hash).
  public static func crypt(_ passcode: borrowing Secret, setting: [CChar]) throws(HashError) -> String {
    // crypt_data is 32 KiB: allocate it, zero it, and zero it again afterwards
    // because it holds intermediate state derived from the passcode.
    let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
    let size = MemoryLayout<crypt_data>.size
    memset(data, 0, size)
    defer {
      explicit_bzero(data, size)
      data.deallocate()
    }
    let output = passcode.withCString { key in
      crypt_rn(key, setting, data, Int32(size))
    }
    // crypt_rn returns NULL, or a string starting with "*", on failure.
    guard let output, output.pointee != 0x2a else { throw .crypt(errno) }
    return String(cString: output)
  }

  public static func crypt(_ passcode: borrowing Secret, setting: String) throws(HashError) -> String {
    try crypt(passcode, setting: Array(setting.utf8CString))
  }
}

public enum HashError: Error, CustomStringConvertible {
  case gensalt(Int32)
  case crypt(Int32)
  public var description: String {
    switch self {
    case .gensalt(let e): return "crypt_gensalt failed: \(String(cString: strerror(e)))"
    case .crypt(let e): return "crypt failed: \(String(cString: strerror(e)))"
    }
  }
}
