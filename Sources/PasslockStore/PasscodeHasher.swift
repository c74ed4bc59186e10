import CXCrypt
import Glibc
import PasslockPOSIX

/// yescrypt hashing through libxcrypt (`crypt_gensalt_rn`, `crypt_rn`).
public enum PasscodeHasher {
  /// The slowest yescrypt cost we choose; 11 takes seconds per verify.
  public static let costs: ClosedRange<Int> = 1...11
  /// iOS tunes its passcode derivation to ~80 ms per try; we aim a little
  /// above, at 90 ms: the step is chosen from one timing, and a step that
  /// timed 80 ms at `set` then verified in 76 ms on a quieter machine.
  public static let targetNanoseconds: UInt64 = 90_000_000

  /// Hashes `passcode` at `cost` with a fresh random salt.
  public static func hash(_ passcode: borrowing Secret, cost: Int) throws(HashError) -> String {
    try crypt(passcode, setting: try setting(cost: cost))
  }

  /// libxcrypt's yescrypt setting for `cost` ("$y$" flavor N r "$" salt): each
  /// cost doubles N, so twice the time and memory of the one before.
  static func setting(cost: Int) throws(HashError) -> [CChar] {
    var setting = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
    // A nil random source makes libxcrypt draw the salt from the kernel (getrandom).
    guard crypt_gensalt_rn("$y$", UInt(cost), nil, 0, &setting, Int32(setting.count)) != nil else {
      throw .gensalt(errno)
    }
    return setting
  }

  /// The same setting with yescrypt's block size r raised from 32 to 48: 1.5
  /// times the time and memory, halfway to the next cost. nil unless the
  /// setting is the "$y$j?T$…" form libxcrypt makes for costs 3–11.
  static func withLargerBlocks(_ setting: [CChar]) -> [CChar]? {
    let bytes = setting.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    // "T" is r = 32 and "j" r = 48 in yescrypt's encoding (itoa64 of r - 1).
    guard bytes.count > 7, bytes.starts(with: Array("$y$j".utf8)), bytes[5] == UInt8(ascii: "T"), bytes[6] == UInt8(ascii: "$")
    else { return nil }
    var larger = setting
    larger[5] = CChar(bitPattern: UInt8(ascii: "j"))
    return larger
  }

  /// Hashes at the lowest step that takes at least `targetNanoseconds` here,
  /// starting from `minimumCost`; the parameters end up recorded in the hash
  /// string. The steps are the costs with, between each two, the cost with
  /// larger blocks (×1.5, then ×1.33): the result lands within 1.5 times the
  /// target (90–135 ms), where whole costs alone could reach twice it.
  public static func calibratedHash(_ passcode: borrowing Secret, minimumCost: Int = 5) throws(HashError) -> String {
    var cost = minimumCost
    while true {
      let base = try setting(cost: cost)
      for step in [base, withLargerBlocks(base)].compactMap({ $0 }) {
        let start = monotonicNanoseconds()
        let result = try crypt(passcode, setting: step)
        if monotonicNanoseconds() - start >= targetNanoseconds || cost >= costs.upperBound { return result }
      }
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
