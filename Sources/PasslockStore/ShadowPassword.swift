import CXCrypt
import Glibc
import PasslockPOSIX

/// Whether a secret is the account's password, checked the way pam_unix
/// checks it as root: crypt(3) under the shadow entry's own setting. Only
/// root can read the entry; elsewhere, and for an account without a usable
/// hash (locked, no password, kept outside the shadow database), the answer
/// is no.
public enum ShadowPassword {
  public static func matches(user: String, _ secret: borrowing Secret) -> Bool {
    var entry = spwd()
    var result: UnsafeMutablePointer<spwd>?
    var buffer = [CChar](repeating: 0, count: 16384)
    defer { explicit_bzero(&buffer, buffer.count) }
    guard getspnam_r(user, &entry, &buffer, buffer.count, &result) == 0, result != nil, let stored = entry.sp_pwdp else {
      return false
    }
    let hash = String(cString: stored)
    // "!", "*", "!$y$…" (locked) and "" (no password) are never matched.
    guard hash.hasPrefix("$"), secret.count > 0 else { return false }
    guard let computed = try? PasscodeHasher.crypt(secret, setting: hash) else { return false }
    return ConstantTime.equals(computed, hash)
  }
}
