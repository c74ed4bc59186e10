import Foundation
import PasslockPOSIX
import Testing

/// `passlock lock` on a real pty inside tmux.
@Suite(
  .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux (scripts/install-deps installs it)"))
struct LockEndToEndTests {
  static func locked(passcode: String = "2580") -> (Harness, Tmux) {
    let h = Harness()
    h.passlock("set", "--stdin", input: "\(passcode)\n\(passcode)\n")
    return (h, Tmux(h))
  }

  @Test func wrongThenRightRestoresTheScreenAndTermios() throws {
    let (h, t) = Self.locked()
    t.type("echo marker-before; stty -g > \(h.root)/before; passlock lock; echo rc=$?; stty -g > \(h.root)/after", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    #expect(!t.screen.contains("marker-before"), "the shell's screen is hidden")
    t.type("1111")
    #expect(t.waitFor("Passcode didn't match"))
    #expect(t.waitFor("1 failed attempt"))
    Wait.pastShake()
    t.type("2580")
    let screen = t.waitFor { $0.contains("rc=0") }
    #expect(screen.contains("rc=0"))
    #expect(screen.contains("marker-before"), "the previous screen content is back")
    #expect(!screen.contains("Enter Passcode"))
    // rc=0 is echoed before the shell runs the stty that writes `after`.
    Wait.until { (try? String(contentsOfFile: h.root + "/after", encoding: .utf8))?.hasSuffix("\n") == true }
    let before = try String(contentsOfFile: h.root + "/before", encoding: .utf8)
    let after = try String(contentsOfFile: h.root + "/after", encoding: .utf8)
    #expect(before == after, "termios restored")
  }

  /// A --ready-fd that is not open is refused before the terminal is
  /// touched (the terminal would take that number, and the ready byte and
  /// the lock screen's end would go to it).
  @Test func aReadyDescriptorThatIsNotOpenIsRefused() {
    let (h, t) = Self.locked()
    // The quotes keep the typed line from matching what is waited for.
    t.type("clear; passlock lock --ready-fd 9 9>&-; echo \"exit\"\" status $?\"", enter: true)
    let screen = t.waitFor { $0.contains("exit status") }
    #expect(screen.contains("--ready-fd 9 is not an open descriptor"), "\(screen)")
    #expect(screen.contains("exit status") && !screen.contains("exit status 0"))
    #expect(!screen.contains("Enter Passcode"))
    _ = h
  }

  @Test func deleteAndClearEditTheEntry() {
    let (_, t) = Self.locked(passcode: "258046")
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    t.type("25")
    t.keys("BSpace")
    #expect(t.waitFor(2) { $0.contains("2  ○  ○  ○  ○  ○") || $0.contains("●  ○  ○  ○  ○  ○") }.contains("○  ○  ○  ○  ○"))
    t.type("999")
    t.keys("C-u")
    #expect(t.waitFor("○  ○  ○  ○  ○  ○"))
    t.type("258046")
    #expect(t.waitFor("rc=0"))
  }

  @Test func aResizeRedrawsTheLayout() {
    let (_, t) = Self.locked()
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("╭─────╮"))
    t.tmux("resize-window -x 40 -y 12")
    #expect(t.waitFor("1     2     3"), "the compact keypad at 40×12")
    #expect(!t.screen.contains("╭"))
    t.type("2580")
    #expect(t.waitFor("rc=0"))
  }

  @Test func noPasscodeLeavesTheTerminalAlone() {
    let h = Harness()
    let t = Tmux(h)
    t.type("echo still-here; passlock lock; echo rc=$?", enter: true)
    let screen = t.waitFor { $0.contains("rc=2") }
    #expect(screen.contains("Error: No passcode is set; run 'passlock set' first."))
    #expect(screen.contains("rc=2"))
    #expect(screen.contains("still-here"))
  }

  @Test func notATerminalIsAClearError() {
    let (h, _) = Self.locked()
    let result = h.passlock("lock")
    #expect(result.status == 2)
    #expect(result.stderr == "Error: standard input is not a terminal; run 'passlock lock' in a terminal, or pass --tty PATH\n")
  }

  @Test func escapeAttemptsDoNothing() throws {
    let (_, t) = Self.locked()
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    t.keys("C-c", "C-z", "C-\\\\", "C-d", "C-s", "C-q", "Escape", "Up", "Down", "F1", "F12", "Home", "PageUp")
    // The right passcode inside a bracketed paste, then mouse reports and OSC.
    t.bytes(Array("\u{1b}[200~2580\u{1b}[201~".utf8))
    t.bytes(Array("\u{1b}[<2;10;10M\u{1b}[<64;5;5M\u{1b}]0;2580\u{7}".utf8))
    // A digit after all that: once it shows, everything before it was read.
    t.type("7")
    #expect(t.waitFor("7  ○  ○  ○"), "the lock screen read all of it, and nothing before the 7 as a digit")
    t.keys("C-u")
    let screen = t.waitFor { $0.contains("○  ○  ○  ○") }
    #expect(screen.contains("Enter Passcode"))
    #expect(screen.contains("○  ○  ○  ○"), "no digit was taken")
    #expect(!screen.contains("rc=0"))
    let pid = try #require(t.lockerPID)
    // Ignored, not caught: the kernel drops them at once (SigIgn in /proc).
    let signals = [SIGINT, SIGTERM, SIGQUIT, SIGTSTP, SIGTTOU]
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    let ignored =
      status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.flatMap {
        UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
      } ?? 0
    for signal in signals {
      #expect(ignored & (1 << UInt64(signal - 1)) != 0, "signal \(signal) is ignored")
      kill(pid, signal)
    }
    #expect(kill(pid, 0) == 0, "the lock survives INT, TERM, QUIT, TSTP")
    #expect(t.screen.contains("Enter Passcode"))
    t.type("2580")
    #expect(t.waitFor("rc=0"))
  }

  @Test func mouseClicksOnTheKeypadTypeDigits() {
    let (_, t) = Self.locked()
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    // SGR 1006 presses on the centres of 2, 5, 8 and 0 in the 80×24 layout.
    for (column, row) in [(40, 9), (40, 12), (40, 15), (40, 18)] {
      t.bytes(Array("\u{1b}[<0;\(column);\(row)M\u{1b}[<0;\(column);\(row)m".utf8))
    }
    #expect(t.waitFor("rc=0"))
  }

  @Test func randomBytesNeitherCrashNorUnlock() throws {
    let (_, t) = Self.locked(passcode: "80264913")
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    var generator = SplitMix(seed: 0x5eed)
    let noise = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    t.bytes(noise)
    // Read to its end once a key after it is answered (Ctrl-U, then a digit).
    t.keys("Escape", "C-u")
    t.type("7")
    _ = t.waitFor { $0.contains("7  ○  ○  ○") || $0.contains("rc=") }
    let pid = try #require(t.lockerPID)
    #expect(kill(pid, 0) == 0, "still running")
    let screen = t.screen
    #expect(!screen.contains("rc=0"), "still locked")
    // Tab in the noise may have opened the account password field: locked either way.
    #expect(screen.contains("Enter Passcode") || screen.contains("Account Password"))
  }
}

/// The account password from the lock screen, through the `passlock` PAM
/// service (pam_matrix) run by the gatekeeper.
@Suite(
  .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux (scripts/install-deps installs it)"))
struct AccountPasswordEndToEndTests {
  @Test func tabOpensThePasswordFieldAndItUnlocks() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    h.passlock("verify", "--stdin", input: "1111\n")
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Tab: password"))
    t.keys("Tab")
    #expect(t.waitFor("Password: ____"), "PAM's own prompt labels the field")
    t.type("hunter3")
    t.keys("Enter")
    #expect(t.waitFor("Password not accepted (Authentication failure)"))
    t.keys("Escape")
    #expect(t.waitFor("Enter Passcode"), "Esc goes back to the keypad")
    t.keys("Tab")
    #expect(t.waitFor("Password: ____"))
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0"))
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "the counter is reset")
  }

  @Test func afterTheTenthFailureOnlyThePasswordOpens() {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    h.writeFile("attempts", "passlock-attempts 1\nfailures=9\nretry_after=0\nlast_wrong=\n")
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    t.type("1111")
    #expect(t.waitFor("Too many attempts: the account password is required"))
    #expect(t.waitFor("Password: ____"), "the field opens by itself")
    t.keys("Escape")  // no way back to the keypad after a lockout
    t.type("2580")
    // The digits went into the password field (masked; the first may have
    // gone with the Escape as an Alt key): only then look.
    #expect(t.waitFor("Password: ●●●"), "typed into the password field: \(t.screen)")
    #expect(!t.screen.contains("rc=0"), "the passcode is no longer accepted")
    t.keys("C-u")
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0"))
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0, "the passcode works again")
  }

  /// A passcode set without the account password (so never used in this
  /// boot), the password through pam_matrix, and PasswordAfterBoot=yes in
  /// the system file the (not setuid) gatekeeper reads.
  static func passwordFirst() throws -> Harness {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    let system = h.root + "/etc-passlock"
    try FileManager.default.createDirectory(atPath: system, withIntermediateDirectories: true)
    try "[Authentication]\nPasswordAfterBoot=yes\n".write(toFile: system + "/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = system
    return h
  }

  /// Password first ([Authentication] PasswordAfterBoot): a passcode set
  /// without the account password leaves it unused in this boot, so the
  /// passcode is refused (nothing counted) and the lock screen opens the
  /// password field saying why; once the password was used, the passcode works.
  @Test func passwordFirstAsksForThePasswordOnceThenThePasscodeWorks() throws {
    let h = try Self.passwordFirst()
    let refused = h.passlock("verify", "--stdin", input: "2580\n")
    #expect(refused.status == 77 && refused.stderr.contains("Enter your password once after a restart"), "\(refused)")
    let status = h.passlock("status", "--json").stdout
    #expect(status.contains("\"failed_attempts\":0,") && status.contains("\"password_first\":\"restart\""), "\(status)")
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter your password once after a restart"))
    #expect(t.waitFor("Password: ____"), "the field opens by itself")
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0"))
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0, "the passcode works from now on")
  }

  /// A grace never skips what only the account password opens: with
  /// password first asking for it (a lockout likewise), a key typed at once
  /// goes into the password field, and only the password unlocks.
  @Test func noGraceWhereOnlyThePasswordOpens() throws {
    let h = try Self.passwordFirst()
    let t = Tmux(h)
    t.type("passlock lock --grace-ms 60000; echo rc=$?", enter: true)
    #expect(t.waitFor("Password: ____"))
    t.type("x")
    #expect(t.waitFor("Password: ●"), "the key went into the password field: \(t.screen)")
    #expect(!t.screen.contains("rc=0"))
    t.keys("C-u")
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0"))
  }

  // MARK: The first frame from the cached status (StatusCache)

  /// In a login session (XDG_RUNTIME_DIR is where the lock screen keeps its
  /// last status), after one lock and unlock: the cache's path is returned.
  static func afterOneLock() -> (Harness, Tmux, String) {
    let h = Harness()
    h.environment["XDG_RUNTIME_DIR"] = h.root + "/run"
    mkdir(h.root + "/run", 0o700)
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    t.type("2580")
    #expect(t.waitFor("rc=0"))
    return (h, t, h.root + "/run/passlock/lock-screen.status")
  }

  @Test func aLockSavesItsStatusForTheNextFirstFrameAndSetForgetsIt() throws {
    let (h, _, cache) = Self.afterOneLock()
    var st = stat()
    #expect(stat(cache, &st) == 0, "the gatekeeper's status is saved")
    #expect(st.st_mode & 0o777 == 0o600)
    #expect(try String(contentsOfFile: cache, encoding: .utf8).contains("length=4\n"))
    h.passlock("change", "--stdin", input: "2580\n135790\n135790\n")
    #expect(stat(cache, &st) != 0, "a new passcode: the next first frame waits for the gatekeeper")
  }

  @Test func aStaleCachedStatusIsReplacedBeforeAnyKeyCounts() throws {
    let (_, t, cache) = Self.afterOneLock()
    // Six digits and a failure, as if from long ago: the gatekeeper says four and none.
    let saved = try String(contentsOfFile: cache, encoding: .utf8)
    try saved.replacingOccurrences(of: "length=4", with: "length=6")
      .replacingOccurrences(of: "failed_attempts=0", with: "failed_attempts=3")
      .write(toFile: cache, atomically: true, encoding: .utf8)
    t.type("clear; passlock lock; echo rc2=$?", enter: true)
    let four = t.waitFor { $0.contains("○  ○  ○  ○") && !$0.contains("○  ○  ○  ○  ○") }
    #expect(four.contains("○  ○  ○  ○") && !four.contains("○  ○  ○  ○  ○"), "four dots once the gatekeeper answers")
    t.type("2580")
    let screen = t.waitFor { $0.contains("rc2=0") }
    #expect(screen.contains("rc2=0"), "four digits unlock: the gatekeeper's length, not the cache's")
    #expect(try String(contentsOfFile: cache, encoding: .utf8).contains("length=4\n"), "the cache is corrected")
  }

  /// The first frame is the cached status's, drawn before the gatekeeper
  /// has answered (here it takes a second to start); keys typed meanwhile
  /// wait, and count against the gatekeeper's length once it answers.
  @Test func theFirstFrameComesFromTheCacheBeforeTheGatekeeperAnswers() throws {
    let (h, t, cache) = Self.afterOneLock()
    let saved = try String(contentsOfFile: cache, encoding: .utf8)
    try saved.replacingOccurrences(of: "length=4", with: "length=6").write(toFile: cache, atomically: true, encoding: .utf8)
    let slow = h.root + "/slow-passlock-auth"
    try "#!/bin/sh\nsleep 1\nexec \(Harness.binDirectory)/passlock-auth \"$@\"\n".write(toFile: slow, atomically: true, encoding: .utf8)
    chmod(slow, 0o755)
    t.type("clear; PASSLOCK_AUTH=\(slow) passlock lock; echo rc2=$?", enter: true)
    // Six dots can only be the cache's: the gatekeeper is asked after the frame and takes a second.
    let six = t.waitFor { $0.contains("○  ○  ○  ○  ○  ○") }
    #expect(six.contains("○  ○  ○  ○  ○  ○"), "the cached six dots, within the gatekeeper's second")
    t.type("2580")  // before the gatekeeper has answered
    let screen = t.waitFor(8) { $0.contains("rc2=0") }
    #expect(screen.contains("rc2=0"), "read once the gatekeeper's four digits replaced the cached six")
  }

  /// Fail closed: a passcode removed behind the lock screen's back (its
  /// cached status says one is set) does not give the terminal back: the
  /// gatekeeper's answer opens the account password field, which unlocks.
  @Test func aPasscodeGoneUnderACachedStatusLeavesTheAccountPassword() throws {
    let (h, t, cache) = Self.afterOneLock()
    h.accountPassword("hunter2")
    for name in try FileManager.default.contentsOfDirectory(atPath: h.stateDirectory) {
      try FileManager.default.removeItem(atPath: h.stateDirectory + "/" + name)
    }
    // (The tmux session started before the password's PAM service was made.)
    t.type("clear; echo still-here; PASSLOCK_PAM_CONFIG_DIR=\(h.root)/pam.d passlock lock; echo rc2=$?", enter: true)
    #expect(t.waitFor("No passcode is set: enter your account password"))
    #expect(t.waitFor("Password: ____"), "the field opens by itself")
    let screen = t.screen
    #expect(!screen.contains("still-here") && !screen.contains("rc2="), "the terminal stays locked: \(screen)")
    var st = stat()
    #expect(stat(cache, &st) != 0, "the wrong cache is gone")
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc2=0"), "the account password unlocks")
  }
}

/// A process holding the user's store and stopped there (a user can SIGSTOP
/// their own sudo or gatekeeper mid-write) stalls nothing: the store's lock
/// is waited for 2 s, then the check says the store is busy. The account
/// password still unlocks, and clears the counter once the store is free.
@Suite(
  .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux (scripts/install-deps installs it)"))
final class BusyStoreEndToEndTests {
  let h = Harness()
  var holder: pid_t = 0

  deinit { if holder > 0 { kill(holder, SIGKILL) } }

  /// A process that takes the store's lock (flock on its directory), says
  /// so, and stops itself while holding it.
  func holdTheStoreStopped() throws {
    let script =
      "import fcntl, os, signal, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
      + "open(sys.argv[2], 'w').close()\nos.kill(os.getpid(), signal.SIGSTOP)\n"
    let marker = h.root + "/held"
    holder = try #require(Spawn.start(["/usr/bin/python3", "-c", script, h.stateDirectory, marker], environment: h.environment))
    try #require(Wait.until(10) { FileManager.default.fileExists(atPath: marker) }, "the holder took the lock")
  }

  @Test func aStoppedHolderOfTheStoreIsBusyNotAHang() throws {
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    #expect(h.passlock("verify", "--stdin", input: "1111\n").status == 1)
    try holdTheStoreStopped()

    let started = Date()
    let verify = h.passlock("verify", "--stdin", input: "2580\n")
    let took = Date().timeIntervalSince(started)
    #expect(verify.status == 73, "\(verify.stderr)")
    #expect(verify.stderr.contains("is busy: another process has held it for over 2 s"), "\(verify.stderr)")
    let deadline = SecureDirectory.lockDeadlineSeconds
    #expect(took >= deadline - 0.1 && took < deadline + 3, "answered after the \(deadline) s deadline, not hung: \(took) s")

    let t = Tmux(h)
    t.type("passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter Passcode"))
    t.type("2580")
    #expect(t.waitFor("Passcode store busy. Try again.", seconds: 6), "the lock screen says so instead of hanging at Checking…")
    #expect(!t.screen.contains("rc=0"), "still locked")
    t.keys("Tab")
    #expect(t.waitFor("Password: ____"))
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0", seconds: 6), "the account password unlocks although the counter cannot be cleared yet")

    kill(holder, SIGKILL)
    _ = Spawn.wait(holder, seconds: 5)
    holder = 0
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "the accepted password cleared the counter")
    #expect(h.passlock("verify", "--stdin", input: "2580\n").status == 0)
    #expect(h.file("clear-pending") == nil, "the pending clear was carried out")
  }
}
