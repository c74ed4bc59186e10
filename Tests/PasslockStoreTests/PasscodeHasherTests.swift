import Glibc
import PasslockPOSIX
import Testing

@testable import PasslockStore

/// The calibration's half steps: yescrypt with larger blocks between two costs.
@Suite struct PasscodeHasherTests {
  static func secret(_ text: String) -> Secret {
    var secret = Secret()
    for byte in text.utf8 { _ = secret.append(byte) }
    return secret
  }

  @Test func largerBlocksAreRecordedInTheHashAndVerify() throws {
    let base = try PasscodeHasher.setting(cost: 3)
    let larger = try #require(PasscodeHasher.withLargerBlocks(base))
    let text = String(cString: larger)
    #expect(text.hasPrefix("$y$j"))
    #expect(Array(text.utf8)[5] == UInt8(ascii: "j"), "r = 48 in the parameters")
    #expect(text.dropFirst(7) == String(cString: base).dropFirst(7), "the same salt")
    let hash = try PasscodeHasher.crypt(Self.secret("2580"), setting: larger)
    #expect(hash.hasPrefix(String(text.prefix(7))))
    // Verifying is crypt with the stored hash as the setting.
    #expect(try PasscodeHasher.crypt(Self.secret("2580"), setting: hash) == hash)
    #expect(try PasscodeHasher.crypt(Self.secret("2581"), setting: hash) != hash)
  }

  @Test func onlyLibxcryptsUsualFormGetsLargerBlocks() {
    func setting(_ text: String) -> [CChar] { Array(text.utf8CString) }
    #expect(PasscodeHasher.withLargerBlocks(setting("$y$j9T$abcdefghijklmnop")) != nil)
    #expect(PasscodeHasher.withLargerBlocks(setting("$y$j9j$abcdefghijklmnop")) == nil, "already larger")
    #expect(PasscodeHasher.withLargerBlocks(setting("$y$j75$abcdefghijklmnop")) == nil, "cost 1–2 use r = 8")
    #expect(PasscodeHasher.withLargerBlocks(setting("$6$salt$")) == nil)
  }
}
