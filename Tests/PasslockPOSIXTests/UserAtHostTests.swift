import Glibc
import Testing

@testable import PasslockPOSIX

/// The user@host line on the lock screen: control characters dropped.
@Suite struct UserAtHostTests {
  /// The user name may come from the user-written status cache, and the
  /// status line goes to the terminal as it is (from root, in passlock-vt):
  /// no escape sequence gets through, C0, DEL or C1.
  @Test func controlCharactersAreDropped() {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let name = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #expect(userAtHost("al\u{1b}[2Jice\u{7f}\u{9b}1m\u{85}") == "al[2Jice1m@" + name)
    #expect(userAtHost("zoë") == "zoë@" + name)
  }
}
