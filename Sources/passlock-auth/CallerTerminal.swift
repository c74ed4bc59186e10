import Glibc

/// The terminal the caller is at, handed over as descriptor 3 (the lock
/// screen's own terminal, or the CLI's): it names PAM_TTY for both PAM
/// services, as pam_access, pam_securetty and pam_fprintd's logging see it.
/// Taken only when it is a terminal owned by the real user (as login(1)
/// leaves a console, and as a pty is), so a caller cannot name another
/// user's console; otherwise PAM_TTY stays unset.
enum CallerTerminal {
  static let descriptor: Int32 = 3

  static func name() -> String? {
    var st = stat()
    guard isatty(descriptor) == 1, fstat(descriptor, &st) == 0, st.st_mode & S_IFMT == S_IFCHR, st.st_uid == getuid(),
      let name = ttyname(descriptor)
    else { return nil }
    return String(cString: name)
  }
}
