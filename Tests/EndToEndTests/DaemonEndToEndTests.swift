import Foundation
import PasslockBus
import PasslockPOSIX
import Testing

/// passlockd against a real dbus-daemon and python-dbusmock's logind, with a
/// pty as the session's TTY. Everything is driven through the mock (signals
/// sent by any other connection are, rightly, ignored by the daemon).
@Suite(.serialized, .enabled(if: LogindMock.available, "needs dbus-daemon and python3-dbusmock (scripts/install-deps)"))
final class DaemonEndToEndTests {
  let h = Harness()
  let logind: LogindMock

  init() throws {
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
    logind = try LogindMock(h)
  }

  func waitFor(_ what: String, seconds: Double = 5, _ condition: () -> Bool) {
    let held = Wait.until(seconds, every: 2_000, condition)
    #expect(held, "\(what)\n\(logind.daemonLog)")
  }

  /// After resume the lock screen draws itself again in full (the clock has
  /// moved; a console may have come back blank).
  func waitForTheFrameAfterResume() { waitForScreen("Enter Passcode", "the lock screen drawn again after resume") }

  /// The daemon's session as a Wayland session without a VT (the pty stands
  /// in for where its lock screen goes), with `config` as the system file.
  func aGraphicalSession(configured config: String) throws {
    try config.write(toFile: h.root + "/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = h.root
    logind.python(
      "session('\(logind.session)').UpdateProperties(SESSION, {'Type': 'wayland', 'VTNr': dbus.UInt32(0)}, dbus_interface=MOCK)")
  }

  /// logind's IdleHint for the session (swayidle's idlehint sets it), idle
  /// since `secondsAgo`.
  func setIdleHint(_ on: Bool, secondsAgo: Int = 0) {
    let since = Int(Date().timeIntervalSince1970 * 1_000_000) - secondsAgo * 1_000_000
    logind.python(
      "session('\(logind.session)').UpdateProperties(SESSION, {'IdleHint': \(on ? "True" : "False"), 'IdleSinceHint': dbus.UInt64(\(since))}, dbus_interface=MOCK)"
    )
  }

  /// Waits until the pty shows `text` in what it receives from now on.
  func waitForScreen(_ text: String, _ what: String, seconds: Double = 5) {
    var shown = ""
    waitFor(what, seconds: seconds) {
      shown += logind.drain()
      return shown.contains(text)
    }
  }

  /// The signals sent to `pid` and not yet delivered (/proc's ShdPnd).
  static func pendingSignals(_ pid: pid_t) -> UInt64 {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("ShdPnd:") }
    return line.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
  }

  /// Types the passcode into the lock screen and waits for the unlock.
  func unlock() {
    logind.type("2580")
    waitFor("unlocked: LockedHint false") { !logind.lockedHint && logind.lockerPIDs.isEmpty }
  }

  /// The passcode once the lock screen has drawn itself: it discards what
  /// was typed before (type-ahead), which a slow machine's test could hit.
  func unlockOnceDrawn() {
    waitForScreen("Enter Passcode", "the lock screen drawn")
    unlock()
  }

  @Test func suspendShowsTheLockBeforeTheInhibitorGoes() throws {
    try logind.startDaemon()
    waitFor("an inhibitor while unlocked") { logind.inhibitors() == ["passlock"] }
    var misses = 0
    for cycle in 1...50 {
      _ = logind.drain()
      logind.emitPrepareForSleep(true)
      waitFor("cycle \(cycle): the inhibitor is released") { logind.inhibitors().isEmpty }
      // The frame must already be on the pty when the inhibitor is gone.
      if !logind.drain().contains("Enter Passcode") { misses += 1 }
      #expect(logind.lockedHint, "cycle \(cycle): LockedHint")
      logind.emitPrepareForSleep(false)
      waitFor("cycle \(cycle): a new inhibitor after resume") { logind.inhibitors() == ["passlock"] }
      waitForTheFrameAfterResume()
      unlock()
    }
    #expect(misses == 0)
  }

  /// The person types as soon as the screen is back; logind announces the
  /// resume only after the sleep hooks ran. Keys the lock screen has not read
  /// yet when passlockd's resume signal comes count (they were dropped once,
  /// which lost the first digits typed after opening the lid).
  @Test func keysTypedBeforeTheResumeSignalCount() throws {
    try logind.startDaemon()
    waitFor("an inhibitor while unlocked") { logind.inhibitors() == ["passlock"] }
    logind.emitPrepareForSleep(true)
    waitFor("the inhibitor is released") { logind.inhibitors().isEmpty }
    // Held still, so the keys are unread when the signal comes.
    let screen = try #require(logind.lockerPIDs.first)
    kill(screen, SIGSTOP)
    waitFor("the lock screen stopped") { processStat(screen).first == "T" }
    logind.type("2580")
    logind.emitPrepareForSleep(false)
    waitFor("passlockd's resume signal pending on the held lock screen") {
      Self.pendingSignals(screen) & (1 << (SIGUSR1 - 1)) != 0
    }
    kill(screen, SIGCONT)
    waitFor("unlocked by the keys typed before the signal") { !logind.lockedHint && logind.lockerPIDs.isEmpty }
  }

  /// A shell on the session's terminal (its leader, in the foreground) is
  /// stopped before the lock screen draws (logind's Leader names it: no
  /// /proc scan), so it cannot read the passcode; it runs again after the unlock.
  @Test func theSessionsForegroundJobIsStoppedBeforeTheFrame() throws {
    let shell = try #require(
      Spawn.start(
        [
          "/usr/bin/python3", "-c",
          "import os, fcntl, termios, sys; os.setsid(); fd = os.open(sys.argv[1], os.O_RDWR); "
            + "fcntl.ioctl(fd, termios.TIOCSCTTY, 0); os.execv('/bin/sleep', ['sleep', '60'])",
          logind.tty,
        ], environment: h.environment))
    defer {
      kill(shell, SIGKILL)
      _ = Spawn.wait(shell, seconds: 2)
    }
    func state() -> String { ForegroundJob.statFields(shell)?.first.map(String.init) ?? "?" }
    waitFor("the stand-in shell owns the terminal") {
      ForegroundJob.statFields(shell).map { $0.count > 5 && $0[5] == $0[2] && $0[0] == "S" } ?? false
    }
    _ = logind.python("session('\(logind.session)').UpdateProperties(SESSION, {'Leader': dbus.UInt32(\(shell))}, dbus_interface=MOCK)")
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    logind.lockSession()
    var screen = ""
    waitFor("locked") {
      screen += logind.drain()
      return screen.contains("Enter Passcode")
    }
    #expect(state() == "T", "stopped by the time the frame is on the terminal")
    let command = logind.lockerPIDs.first.flatMap { try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8) } ?? ""
    #expect(command.contains("--leader\u{0}\(shell)"), "the daemon names the leader: \(command)")
    logind.type("2580")
    waitFor("unlocked") { !logind.lockedHint && logind.lockerPIDs.isEmpty }
    waitFor("running again after the unlock") { state() == "S" }
  }

  /// Anyone on the bus can send a signal straight to passlockd's connection;
  /// only logind's own count (a forged SessionRemoved would end a lock).
  @Test func aSignalFromAnyoneButLogindIsIgnored() throws {
    let bus = logind.bus
    var seen: [Bool] = []
    try bus.onSignal(
      sender: "org.freedesktop.login1", path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
      member: "PrepareForSleep"
    ) { message in seen.append((try? message.bool()) ?? false) }
    let forged = h.run(
      "/usr/bin/python3",
      [
        "-c",
        "import dbus, dbus.lowlevel\nb = dbus.SystemBus()\n"
          + "m = dbus.lowlevel.SignalMessage('/org/freedesktop/login1', 'org.freedesktop.login1.Manager', 'PrepareForSleep')\n"
          + "m.set_destination('\(bus.uniqueName)')\nm.append(False, signature='b')\nb.send_message(m)\nb.flush()\n",
      ], input: Data())
    #expect(forged.status == 0, "\(forged.stderr)")
    logind.emitPrepareForSleep(true)
    waitFor("logind's own signal arrives") {
      var readable = pollfd(fd: bus.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&readable, 1, 50)
      bus.process()
      return !seen.isEmpty
    }
    // logind's next signal: everything sent before it has been read by then.
    logind.emitPrepareForSleep(false)
    waitFor("logind's second signal") {
      var readable = pollfd(fd: bus.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&readable, 1, 50)
      bus.process()
      return seen.count >= 2
    }
    #expect(seen == [true, false], "only logind's PrepareForSleep(true) and (false), not the forged false")
  }

  /// passlockd offers no methods; a call made to its connection gets an
  /// error reply (as sd-bus gives one), never silence.
  @Test func aMethodCallToTheDaemonGetsAnErrorReply() throws {
    let bus = logind.bus
    let out = h.root + "/call.out"
    let caller = try #require(
      Spawn.start(
        [
          "/usr/bin/python3", "-c",
          "import dbus\nb = dbus.SystemBus()\ntry:\n  b.call_blocking('\(bus.uniqueName)', '/', 'org.example.Any', 'Method', '', [], timeout=5)\n"
            + "  r = 'replied'\nexcept dbus.DBusException as e:\n  r = e.get_dbus_name()\nopen('\(out)', 'w').write(r)\n",
        ], environment: h.environment))
    // The bus is ours to serve meanwhile.
    let status = Wait.value(10, every: 0) { () -> Int32? in
      var readable = pollfd(fd: bus.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&readable, 1, 50)
      bus.process()
      return Spawn.wait(caller, seconds: 0.01)
    }
    #expect(status == 0)
    #expect((try? String(contentsOfFile: out, encoding: .utf8)) == "org.freedesktop.DBus.Error.UnknownMethod")
  }

  @Test func lockTwiceIsOneLockerAndThePasscodeUnlocks() throws {
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    logind.lockSession()
    logind.lockSession()
    var screen = ""
    waitFor("locked") {
      screen += logind.drain()
      return logind.lockedHint && screen.contains("Enter Passcode")
    }
    waitFor("the second Lock is answered") { logind.daemonLog.contains("logind Lock — already locked") }
    #expect(logind.lockerPIDs.count == 1, "one lock per session, never stacked")
    logind.type("2580")
    waitFor("unlocked") { !logind.lockedHint && logind.lockerPIDs.isEmpty }
  }

  @Test func aKilledLockerIsBackAtOnceAndAKilledDaemonLocksAgain() throws {
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    logind.lockSession()
    waitFor("locked") { logind.lockerPIDs.count == 1 }
    let first = logind.lockerPIDs[0]
    kill(first, SIGKILL)
    let killedAt = Date()
    waitFor("a new locker") { logind.lockerPIDs.first.map { $0 != first } ?? false }
    let restart = Date().timeIntervalSince(killedAt)
    #expect(restart < 0.1, "restarted in \(Int(restart * 1000)) ms")

    // The daemon dies with the session locked (its locker outlives it, as
    // with the unit's KillMode=process); started again, it adopts that lock
    // screen instead of starting a second one, and sees its unlock.
    let orphan = logind.lockerPIDs[0]
    logind.stopDaemon(andLockers: false)
    #expect(kill(orphan, 0) == 0, "the lock screen outlived the daemon")
    try logind.startDaemon()
    waitFor("adopted after the daemon restart") { logind.daemonLog.contains("the lock screen \(orphan) survived a restart") }
    #expect(logind.lockerPIDs.isEmpty, "no second lock screen on the same terminal")
    #expect(kill(orphan, 0) == 0 && !isZombie(orphan), "the adopted lock screen still holds the terminal")
    #expect(logind.lockedHint)
    _ = logind.drain()
    logind.type("2580")
    waitFor("the adopted lock screen's unlock is seen", seconds: 3) { !logind.lockedHint }
    #expect(logind.daemonLog.contains("unlocked"))
    #expect(logind.lockerPIDs.isEmpty)
  }

  /// A lock screen that dies at once every time (as one crashing on a
  /// compositor's nonsense would; here a stand-in that kills itself with
  /// SIGSEGV) is started again with a growing delay, logged, and said by
  /// `passlock status`, while the session stays locked.
  @Test func aLockScreenThatKeepsCrashingIsRestartedWithAGrowingDelayAndSaidSo() throws {
    let crasher = h.root + "/crashing-lock-screen"
    _ = FileManager.default.createFile(atPath: crasher, contents: Data("#!/bin/sh\nkill -SEGV $$\n".utf8))
    chmod(crasher, 0o755)
    h.environment["PASSLOCK_BIN"] = crasher
    try logind.startDaemon()
    logind.lockSession()
    waitFor("restarts with a growing delay", seconds: 10) { logind.daemonLog.contains("starting it again in 400 ms") }
    #expect(logind.daemonLog.contains("starting it again in 200 ms") && logind.daemonLog.contains("starting it again in 0 ms"))
    #expect(logind.lockedHint, "the session stays locked meanwhile")
    let status = h.passlock("status").stdout
    #expect(status.contains("the lock screen keeps failing"), "\(status)")
  }

  @Test func aReplacedLockScreenGivesBackTheSettingsFromBeforeTheLock() throws {
    // An editor's own raw mode (no canonical input, no echo, no signals) on
    // the session's terminal when it locks.
    let slave = open(logind.tty, O_RDWR | O_NOCTTY)
    defer { close(slave) }
    var editor = termios()
    tcgetattr(slave, &editor)
    editor.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
    editor.c_iflag &= ~tcflag_t(ICRNL)
    tcsetattr(slave, TCSANOW, &editor)
    try logind.startDaemon()
    logind.lockSession()
    waitFor("locked") { logind.lockerPIDs.count == 1 }
    // Every frame drawn on the terminal since the lock: the first lock
    // screen's, then (counted apart from it) its replacement's.
    var screen = ""
    func frames() -> Int {
      screen += logind.drain()
      return screen.components(separatedBy: "Enter Passcode").count - 1
    }
    waitFor("the first lock screen's frame") { frames() >= 1 }
    let first = logind.lockerPIDs[0]
    let before = frames()
    kill(first, SIGKILL)  // the replacement finds the terminal in the lock screen's raw mode
    waitFor("a new lock screen") { logind.lockerPIDs.first.map { $0 != first } ?? false }
    waitFor("its frame (its terminal modes set)") { frames() > before }
    logind.type("2580")
    waitFor("unlocked") { !logind.lockedHint && logind.lockerPIDs.isEmpty }
    var after = termios()
    tcgetattr(slave, &after)
    #expect(after.c_lflag == editor.c_lflag && after.c_iflag == editor.c_iflag, "the editor's own settings are back")
    #expect(!FileManager.default.fileExists(atPath: h.root + "/run/passlock/locked/c1.termios"), "nothing left behind")
  }

  func isZombie(_ pid: pid_t) -> Bool { processStat(pid).first == "Z" }

  @Test func logindComingBackGetsANewInhibitor() throws {
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    logind.restartMock()
    waitFor("a new inhibitor on the new logind", seconds: 10) { logind.inhibitors() == ["passlock"] }
    _ = logind.drain()
    logind.lockSession()
    var screen = ""
    waitFor("Lock still works after the reconnect") {
      screen += logind.drain()
      return logind.lockerPIDs.count == 1 && screen.contains("Enter Passcode")
    }
    // Typed once the frame is up: what comes before it is flushed as the lock starts.
    logind.type("2580")
    waitFor("unlocked") { logind.lockerPIDs.isEmpty }
  }

  @Test func noPasscodeMeansNoInhibitorUntilOneIsSet() throws {
    #expect(h.passlock("remove", "--stdin", input: "2580\n").status == 0)
    try logind.startDaemon()  // returns once it logged "passlockd ready: …"
    #expect(logind.daemonLog.contains("passcode not set, inhibitor not held"))
    #expect(logind.inhibitors().isEmpty)
    logind.lockSession()
    waitFor("the Lock is answered") { logind.daemonLog.contains("logind Lock — no passcode is set, nothing to lock with") }
    #expect(logind.lockerPIDs.isEmpty, "nothing to lock with")
    // `passlock set` tells the daemon, which takes an inhibitor without a restart.
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
    waitFor("an inhibitor once a passcode exists") { logind.inhibitors() == ["passlock"] }
    let status = h.passlock("status")
    #expect(status.stdout.contains("Daemon: running, inhibitor held\nSession c1: \(logind.tty), unlocked\n"), "\(status.stdout)")
  }

  @Test func idleLocksOnlyOnceInputStops() throws {
    try "[Idle]\nLockAfterSec=3\n".write(toFile: h.root + "/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = h.root
    try logind.startDaemon()
    // Input read from a TTY moves its access time; that is the idle clock.
    // The kernel moves it only per 8-second bucket, so this fast test moves
    // it itself, every half second for 5 s: no lock. (Tests/System types into
    // a real login session instead.)
    let unlockedWhileTyping = Wait.holds(for: 5, every: 500_000) {
      // UTIME_NOW for the access time, UTIME_OMIT for the modification time.
      var now = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)]
      utimensat(AT_FDCWD, logind.tty, &now, 0)
      return logind.lockerPIDs.isEmpty
    }
    #expect(unlockedWhileTyping, "locked while input was being read\n\(logind.daemonLog)")
    // Input stops: locked once the timeout and the atime's 8 s slack have
    // passed since the last input, never before the timeout.
    let stopped = Date()
    waitFor("locked after the timeout once input stopped", seconds: 16) { logind.lockerPIDs.count == 1 }
    #expect(Date().timeIntervalSince(stopped) >= 3, "locked before the timeout")
    // The daemon logs the lock just after it starts the lock screen.
    waitFor("logged as an idle lock") { logind.daemonLog.contains("locked (idle)") }
  }

  @Test(.enabled(if: getuid() == 0 && access("/dev/tty0", W_OK) == 0, "needs root and kernel virtual consoles"))
  func aConsoleSessionIsLockedOnAVTOfItsOwnBeforeSleep() throws {
    try onAConsoleSession { vt in
      try logind.startDaemon()
      waitFor("started") { logind.inhibitors() == ["passlock"] }
      logind.emitPrepareForSleep(true)
      waitFor("the inhibitor is released") { logind.inhibitors().isEmpty }
      // Released only once the lock screen was on its own VT.
      let lockVT = Int32(VirtualConsoleTests.activeConsole())
      #expect(lockVT != vt.number)
      let screen = VirtualConsoleTests.FreeConsole.readDevice("/dev/vcsu\(lockVT)")
      let text = stride(from: 0, to: screen.count - 3, by: 4).map {
        Character(Unicode.Scalar(UInt32(screen[$0]) | UInt32(screen[$0 + 1]) << 8) ?? " ")
      }
      #expect(String(text).contains("Enter Passcode"), "\(logind.daemonLog)")
      logind.emitPrepareForSleep(false)
      ConsoleHolderTests.type("2580", onVT: lockVT)
      waitFor("unlocked") { !logind.lockedHint && logind.lockerPIDs.isEmpty && VirtualConsoleTests.activeConsole() == vt.number }
    }
  }

  @Test(.enabled(if: getuid() == 0 && access("/dev/tty0", W_OK) == 0, "needs root and kernel virtual consoles"))
  func aGraphicalSessionOnAVTIsLockedOnAVTOfItsOwnBeforeSleep() throws {
    try onAConsoleSession { vt in
      // An X11 session as a display manager leaves it: a VT, no TTY.
      logind.python("session('\(logind.session)').UpdateProperties(SESSION, {'Type': 'x11', 'TTY': ''}, dbus_interface=MOCK)")
      try logind.startDaemon()
      waitFor("started") { logind.inhibitors() == ["passlock"] }
      logind.emitPrepareForSleep(true)
      waitFor("the inhibitor is released") { logind.inhibitors().isEmpty }
      let lockVT = Int32(VirtualConsoleTests.activeConsole())
      #expect(lockVT != vt.number, "the lock VT was on screen before the inhibitor went")
      #expect(logind.lockedHint)
      #expect(logind.daemonLog.contains("locked (sleep) on VT \(vt.number)"), "\(logind.daemonLog)")
      logind.emitPrepareForSleep(false)
      ConsoleHolderTests.type("2580", onVT: lockVT)
      waitFor("unlocked, back on the session's VT") {
        !logind.lockedHint && self.pids("passlock-vt --vt \(vt.number)").isEmpty && VirtualConsoleTests.activeConsole() == vt.number
      }
    }
  }

  /// The session's Desktop says KDE, and a stand-in for its `locker` runs
  /// as the test's user; the stand-in's pid.
  func aKDESession(locker: String) throws -> pid_t {
    logind.python("session('\(logind.session)').AddProperty(SESSION, 'Desktop', 'KDE', dbus_interface=MOCK)")
    return try startProcess(named: locker)
  }

  func stopProcess(_ pid: pid_t) {
    kill(pid, SIGKILL)
    _ = Spawn.wait(pid, seconds: 2)
  }

  /// A process named `name` (a copy of sleep: the kernel names it after
  /// its file) run as `user` (root tests) or as the test's user; its pid.
  func startProcess(named name: String, as user: uid_t? = nil) throws -> pid_t {
    // Beside the harness's own directory, open to the other user (swept
    // with it by scripts/test).
    let directory = "/tmp/passlock-e2e-\(name)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    chmod(directory, 0o755)
    try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: directory + "/" + name)
    let command = user.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
    return try #require(Spawn.start(command + [directory + "/" + name, "600"], environment: ["PATH": "/usr/bin:/bin"]))
  }

  /// GNOME Shell locks its sessions by itself (Lock, sleep, idle): a session
  /// whose Desktop says GNOME and in which gnome-shell runs as this user is
  /// left to it: no second lock on top, no wait before sleep, and `passlock
  /// status` says what locks it and whether its lock screen takes the
  /// passcode. Another user's gnome-shell is no evidence; once gnome-shell
  /// is gone, or with Lock.OverDesktop=yes, passlock locks the session.
  @Test func aDesktopThatLocksByItselfIsLeftToIt() throws {
    logind.python("session('\(logind.session)').AddProperty(SESSION, 'Desktop', 'gnome', dbus_interface=MOCK)")
    var shells: [pid_t] = []
    defer {
      for pid in shells {
        kill(pid, SIGKILL)
        _ = Spawn.wait(pid, seconds: 2)
      }
    }
    // logind puts every gnome-shell started here in the session.
    let inSession = { [logind] (pids: [pid_t]) in
      logind.python(
        "m.AddMethod(MANAGER, 'GetSessionByPID', 'u', 'o', 'ret = dbus.ObjectPath(\"/org/freedesktop/login1/session/\(logind.session)\" "
          + "if args[0] in \(pids) else \"/org/freedesktop/login1/session/other\")', dbus_interface=MOCK)")
    }
    if getuid() == 0 {
      shells.append(try startProcess(named: "gnome-shell", as: 65534))
      inSession(shells)
      try logind.startDaemon()
      logind.lockSession()
      waitFor("another user's gnome-shell is no evidence: passlock locks") { logind.lockerPIDs.count == 1 }
      unlockOnceDrawn()
      logind.stopDaemon()
    }
    let shell = try startProcess(named: "gnome-shell")
    shells.append(shell)
    inSession(shells)
    try FileManager.default.createDirectory(atPath: h.root + "/pam.d", withIntermediateDirectories: true)
    h.environment["PASSLOCK_PAM_CONFIG_DIR"] = h.root + "/pam.d"
    try logind.startDaemon()
    waitFor("an inhibitor while unlocked") { logind.inhibitors() == ["passlock"] }

    logind.emitPrepareForSleep(true)
    waitFor("the inhibitor released: nothing to wait for") { logind.inhibitors().isEmpty }
    #expect(logind.lockerPIDs.isEmpty, "no lock on top of GNOME's")
    #expect(logind.daemonLog.contains("session c1: sleep — left to GNOME Shell's own lock screen"), "\(logind.daemonLog)")
    logind.emitPrepareForSleep(false)
    logind.lockSession()
    waitFor("logind's Lock left to it too") { logind.daemonLog.contains("session c1: logind Lock — left to GNOME Shell") }
    #expect(logind.lockerPIDs.isEmpty)
    var status = h.passlock("status").stdout
    #expect(
      status.contains(
        "Session c1: \(logind.tty), left to GNOME Shell's own lock screen, which takes the passcode once "
          + "'sudo pam-auth-update --enable passlock' adds it"), "\(status)")
    try "auth\t[success=2 default=ignore]\tpam_passlock.so\nauth\trequisite\tpam_deny.so\n".write(
      toFile: h.root + "/pam.d/common-auth", atomically: true, encoding: .utf8)
    status = h.passlock("status", "--json").stdout
    #expect(status.contains("\"locked_by\":\"GNOME Shell\",\"passcode_on_its_lock_screen\":true"), "\(status)")

    // gnome-shell gone (crashed, or never the session's): passlock locks.
    kill(shell, SIGKILL)
    _ = Spawn.wait(shell, seconds: 2)
    logind.lockSession()
    waitFor("locked by passlock once no gnome-shell runs") { logind.lockerPIDs.count == 1 }
    unlockOnceDrawn()
  }

  /// Plasma 6 on Wayland: the screen locker is KWin's, and Plasma starts
  /// KWin as a systemd user service, outside every login (GetSessionByPID
  /// answers "no session"): the graphical session logind elects as the
  /// user's display session is the one it locks. Not another session, nor
  /// a console login that happens to be the display session (no desktop
  /// outside it draws on its terminal).
  @Test func plasmasKWinRunAsAUserServiceLocksItsDisplaySession() throws {
    let kwin = try aKDESession(locker: "kwin_wayland")
    defer { stopProcess(kwin) }
    // A user service: no session for it.
    logind.python(
      """
      m.AddMethod(MANAGER, 'GetSessionByPID', 'u', 'o', \
      'raise dbus.exceptions.DBusException("PID does not belong to any known session", \
      name="org.freedesktop.login1.NoSessionForPID")', dbus_interface=MOCK)
      m.AddMethod(MANAGER, 'GetUser', 'u', 'o', 'ret = dbus.ObjectPath("/org/freedesktop/login1/user/%d" % args[0])', \
      dbus_interface=MOCK)
      """)
    let user = "/org/freedesktop/login1/user/\(getuid())"
    let display = { [logind] (id: String) in
      logind.python(
        """
        bus.get_object('org.freedesktop.login1', '\(user)').UpdateProperties('org.freedesktop.login1.User', \
        {'Display': dbus.Struct(('\(id)', dbus.ObjectPath('/org/freedesktop/login1/session/\(id)')), signature='so')}, \
        dbus_interface=MOCK)
        """)
    }
    // The console login (a tty session) as the display session: locked.
    display(logind.session)
    try logind.startDaemon()
    logind.lockSession()
    waitFor("a console login locked though it is the display session") { logind.lockerPIDs.count == 1 }
    unlockOnceDrawn()
    logind.stopDaemon()
    // A Wayland session (locked on its terminal here), another session the
    // display session: not left to KDE.
    logind.python(
      "session('\(logind.session)').UpdateProperties(SESSION, {'Type': 'wayland', 'VTNr': dbus.UInt32(0)}, dbus_interface=MOCK)")
    display("other")
    try logind.startDaemon()
    logind.lockSession()
    waitFor("another session the display session: passlock locks") { logind.lockerPIDs.count == 1 }
    unlockOnceDrawn()
    #expect(!logind.daemonLog.contains("left to KDE Plasma"), "\(logind.daemonLog)")
    // It the display session: left to KDE.
    display(logind.session)
    logind.lockSession()
    waitFor("left to KDE Plasma") { logind.daemonLog.contains("session c1: logind Lock — left to KDE Plasma's own lock screen") }
    #expect(logind.lockerPIDs.isEmpty, "no lock on top of KDE's")
  }

  /// Lock.OverDesktop=yes: passlock's lock on top of KDE Plasma's own.
  @Test func lockOverDesktopPutsPasslocksLockOnTop() throws {
    let plasma = try aKDESession(locker: "ksmserver")
    defer { stopProcess(plasma) }
    logind.python(
      "m.AddMethod(MANAGER, 'GetSessionByPID', 'u', 'o', 'ret = dbus.ObjectPath(\"/org/freedesktop/login1/session/\(logind.session)\")', "
        + "dbus_interface=MOCK)")
    try "[Lock]\nOverDesktop=yes\n".write(toFile: h.root + "/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = h.root
    try logind.startDaemon()
    logind.lockSession()
    waitFor("passlock's lock on top of KDE's") { logind.lockerPIDs.count == 1 }
    #expect(!h.passlock("status").stdout.contains("KDE Plasma"))
    unlockOnceDrawn()
  }

  @Test func aGraphicalSessionWithoutAVTIsReportedNotLocked() throws {
    logind.python(
      "session('\(logind.session)').UpdateProperties(SESSION, {'Type': 'wayland', 'TTY': '', 'VTNr': dbus.UInt32(0)}, dbus_interface=MOCK)")
    try logind.startDaemon()
    logind.lockSession()
    waitFor("reported") { logind.daemonLog.contains("cannot lock: a wayland session without a VT") }
    #expect(logind.lockerPIDs.isEmpty)
    let status = h.passlock("status")
    #expect(status.stdout.contains("Session c1: no TTY, unlocked, cannot lock: a wayland session without a VT"), "\(status.stdout)")
  }

  @Test func aGraphicalSessionFollowsLogindsIdleHint() throws {
    // A Wayland session (swayidle's idlehint sets IdleHint).
    try aGraphicalSession(configured: "[Idle]\nLockAfterSec=2\n")
    try logind.startDaemon()
    setIdleHint(true, secondsAgo: 0)
    waitFor("the daemon arms an idle lock") { h.passlock("status").stdout.contains("idle lock in") }
    setIdleHint(false, secondsAgo: 0)  // activity: the timer is cancelled
    waitFor("and cancels it") { !h.passlock("status").stdout.contains("idle lock in") }
    #expect(logind.lockerPIDs.isEmpty, "no lock after the session became active again")
    setIdleHint(true, secondsAgo: 1)  // idle since a second ago: locked a second from now
    let armed = Date()
    waitFor("locked once idle for LockAfterSec", seconds: 4) { logind.lockerPIDs.count == 1 }
    #expect(Date().timeIntervalSince(armed) >= 0.8, "not before the timeout")
    // Said once the spawn returns, which may be after the lock screen shows.
    waitFor("the daemon said why") { logind.daemonLog.contains("locked (idle)") }
  }

  /// A session given back while a sleep begins (the passcode typed as the
  /// lid closes) is locked again for that sleep, and the sleep waits for it.
  @Test func anUnlockAsASleepBeginsIsLockedAgainForIt() throws {
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    logind.lockSession()
    waitForScreen("Enter Passcode", "locked")
    waitFor("by one lock screen") { logind.lockerPIDs.count == 1 }
    let first = logind.lockerPIDs.first ?? 0
    logind.emitPrepareForSleep(true)
    logind.type("2580")
    waitFor("locked again for the sleep, by a new lock screen") {
      logind.lockerPIDs.count == 1 && logind.lockerPIDs.first != first && logind.daemonLog.contains("locked (sleep)")
    }
    waitFor("and the sleep goes on once it is up") { logind.inhibitors().isEmpty }
    #expect(logind.lockedHint)
    logind.emitPrepareForSleep(false)
    waitForTheFrameAfterResume()
    logind.type("2580")
    waitFor("unlocked after the sleep") { logind.lockerPIDs.isEmpty && !logind.lockedHint }
  }

  /// An idle lock's grace ([Idle] GraceSec): only the idle lock gets it
  /// (`--grace-ms`), not logind's Lock nor a lock screen that replaces a
  /// killed one; a key within it gives the session back with nothing
  /// counted; PrepareForSleep ends it (SIGUSR1 to the lock screen).
  @Test func onlyAnIdleLockHasAGraceAndASleepOrARestartEndsIt() throws {
    try aGraphicalSession(configured: "[Idle]\nLockAfterSec=1\nGraceSec=30\n")
    try logind.startDaemon()
    waitFor("started") { logind.inhibitors() == ["passlock"] }
    func locked(_ what: String) -> pid_t {
      waitForScreen("Enter Passcode", what)
      waitFor(what) { logind.lockerPIDs.count == 1 }
      return logind.lockerPIDs.first ?? 0
    }
    func command(_ pid: pid_t) -> String { (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "" }
    func unlocked(_ what: String) { waitFor(what) { logind.lockerPIDs.isEmpty && !logind.lockedHint } }
    func failures() -> String {
      h.passlock("status", "--json").stdout.components(separatedBy: "\"failed_attempts\":").last?.prefix(1).description ?? "?"
    }

    logind.lockSession()
    var pid = locked("locked by logind's Lock")
    #expect(!command(pid).contains("--grace-ms"), "logind's Lock has no grace: \(command(pid))")
    logind.type("2580")
    unlocked("unlocked")

    setIdleHint(true, secondsAgo: 2)
    pid = locked("locked once idle")
    setIdleHint(false)
    #expect(command(pid).contains("--grace-ms\u{0}30000"), "the idle lock has the grace: \(command(pid))")
    logind.type("x")
    unlocked("a key within the grace gives the session back")
    #expect(failures() == "0", "nothing counted")

    setIdleHint(true, secondsAgo: 2)
    pid = locked("locked once idle again")
    setIdleHint(false)
    kill(pid, SIGKILL)
    waitFor("a new lock screen replaces the killed one") { logind.lockerPIDs.count == 1 && logind.lockerPIDs.first != pid }
    let replacement = logind.lockerPIDs.first ?? 0
    #expect(!command(replacement).contains("--grace-ms"), "the replacement has no grace: \(command(replacement))")
    waitForScreen("Enter Passcode", "it draws")
    logind.type("1111")
    waitForScreen("didn't match", "a key is a passcode digit there")
    Wait.pastShake()
    logind.type("2580")
    unlocked("unlocked with the passcode")

    setIdleHint(true, secondsAgo: 2)
    pid = locked("locked once idle a third time")
    setIdleHint(false)
    // The sleep's SIGUSR1 ends the grace and makes the lock screen draw
    // itself whole: its title again is the sign it was heard.
    _ = logind.drain()
    logind.emitPrepareForSleep(true)
    waitForScreen("Enter Passcode", "the lock screen heard the sleep begin")
    logind.type("1111")
    waitForScreen("didn't match", "after a sleep began a key is a passcode digit")
    logind.emitPrepareForSleep(false)
    Wait.pastShake()
    logind.type("2580")
    unlocked("unlocked with the passcode")
  }

  /// Runs `body` with the mocked session on a freshly allocated VT that is on
  /// screen, holding the shared console lock; restores the console afterwards.
  func onAConsoleSession(_ body: (VirtualConsoleTests.FreeConsole) throws -> Void) throws {
    try ConsoleAccess.acquire()
    defer { ConsoleAccess.release() }
    let original = VirtualConsoleTests.activeConsole()
    let vt = try VirtualConsoleTests.FreeConsole()
    defer {
      logind.stopDaemon()
      for pid in pids("passlock-vt --vt \(vt.number)") { kill(pid, SIGKILL) }
      _ = h.run(Harness.binDirectory + "/passlock-vt", ["--release"], input: Data())
      for pid in pids("passlock lock --tty /dev/tty") { kill(pid, SIGKILL) }
      try? ConsoleHolderTests.activate(Int32(original))
      vt.release()
    }
    try ConsoleHolderTests.activate(vt.number)
    logind.moveSession(toVT: vt.number)
    try body(vt)
  }

  func pids(_ pattern: String) -> [pid_t] {
    h.run("/usr/bin/pgrep", ["-f", pattern], input: Data()).stdout.split(separator: "\n").compactMap { pid_t($0) }
  }

  @Test(.enabled(if: getuid() == 0 && access("/dev/tty0", W_OK) == 0, "needs root and kernel virtual consoles"))
  func aConsoleHolderOutlivingTheDaemonIsAdoptedNotDoubled() throws {
    try onAConsoleSession { vt in
      let holders = { self.pids("passlock-vt --vt \(vt.number)") }
      try logind.startDaemon()
      logind.lockSession()
      waitFor("the console holder runs") { holders().count == 1 && VirtualConsoleTests.activeConsole() != vt.number }
      let lockVT = Int32(VirtualConsoleTests.activeConsole())
      logind.stopDaemon(andLockers: false)
      try logind.startDaemon()
      waitFor("the new daemon finds the holder") { logind.daemonLog.contains("survived a restart") }
      #expect(holders().count == 1, "no second holder on the same session")
      #expect(logind.lockedHint)
      ConsoleHolderTests.type("2580", onVT: lockVT)
      waitFor("the adopted holder's unlock is noticed") { holders().isEmpty && !logind.lockedHint }
      #expect(VirtualConsoleTests.activeConsole() == vt.number)
    }
  }

  @Test func anUninstalledGatekeeperEndsTheDaemonCleanly() throws {
    // The package removed under a running daemon: it exits 69, which the
    // unit neither restarts nor counts as a failure, instead of crash-looping.
    let copy = h.root + "/bin/passlock-auth"
    try FileManager.default.createDirectory(atPath: h.root + "/bin", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: Harness.binDirectory + "/passlock-auth", toPath: copy)
    h.environment["PASSLOCK_AUTH"] = copy
    try logind.startDaemon()
    let pid = logind.daemonPID
    unlink(copy)
    #expect(Spawn.wait(pid, seconds: 5) == 69, "exit status 69 once the gatekeeper is gone")
    logind.daemonPID = 0
    #expect(logind.daemonLog.contains("\(copy) was removed (passlock was uninstalled); passlockd exits"))
  }

  @Test func aBadConfigExitsNamingFileAndLine() throws {
    try "[Idle]\nLockAfterSec=soon\n".write(toFile: h.root + "/passlock.conf", atomically: true, encoding: .utf8)
    h.environment["PASSLOCK_SYSTEM_CONFIG_DIR"] = h.root
    let run = h.run(Harness.binDirectory + "/passlockd", [], input: Data())
    #expect(run.status == 78)
    #expect(run.stderr == "<3>passlockd: \(h.root)/passlock.conf:2: LockAfterSec=soon: expected a whole number from 0 to 86400\n")
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"))
  func systemdAcceptsTheUnit() throws {
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../systemd/passlockd.service")
    let unit = try String(contentsOf: source, encoding: .utf8)
      .replacingOccurrences(of: "/usr/bin/passlockd", with: Harness.binDirectory + "/passlockd")
    try unit.write(toFile: h.root + "/passlockd.service", atomically: true, encoding: .utf8)
    let verify = h.run("/usr/bin/systemd-analyze", ["verify", h.root + "/passlockd.service"], input: Data())
    #expect(verify.status == 0, "\(verify.stderr)")
  }
}
