import Foundation
import Testing

/// The installed mode: `passlock-auth` setuid root in a staged prefix, a test
/// user running the CLI, the store under root, the account password through the
/// `passlock` PAM service (pam_matrix). Creates and removes the user and files.
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root: creates a user and installs passlock-auth setuid"))
final class SetuidEndToEndTests {
  let prefix: String
  let user: String
  var storeDirectory: String { "\(prefix)/var/lib/passlock/\(user)" }
  let uid: uid_t
  let gid: gid_t

  init() throws {
    // One id for both, so scripts/test can sweep what a killed run left.
    let id = String(UUID().uuidString.prefix(8)).lowercased()
    prefix = "/tmp/passlock-setuid-" + id
    user = "plt" + id
    try Self.sh("useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \(user)")
    let entry = try #require(getpwnam(user))
    uid = entry.pointee.pw_uid
    gid = entry.pointee.pw_gid
    let bin = Harness.binDirectory
    try Self.sh(
      """
      set -e
      mkdir -p \(prefix)/bin \(prefix)/etc/passlock \(prefix)/pam.d
      chmod 755 \(prefix)
      install -o root -g root -m 4755 \(bin)/passlock-auth \(prefix)/bin/passlock-auth
      install -o root -g root -m 755 \(bin)/passlock \(prefix)/bin/passlock
      install -o root -g root -m 755 \(bin)/pam-cycles \(prefix)/bin/pam-cycles
      install -o root -g root -m 4755 \(bin)/passlock-vt \(prefix)/bin/passlock-vt
      mkdir -p \(prefix)/lib/security \(prefix)/module.d
      install -o root -g root -m 644 \(bin)/libpam_passlock.so \(prefix)/lib/security/pam_passlock.so
      printf 'auth required \(prefix)/lib/security/pam_passlock.so helper=\(prefix)/bin/passlock-auth\n' > \(prefix)/module.d/passcode-test
      printf 'auth required pam_deny.so\n' > \(prefix)/module.d/other
      printf '[Store]\\nSystemDirectory=\(prefix)/var/lib/passlock\\n[Authentication]\\nPAMConfigDirectory=\(prefix)/pam.d\\n' > \(prefix)/etc/passlock/passlock.conf
      printf '\(user):secretpw:passlock\\n' > \(prefix)/passdb
      chmod 600 \(prefix)/passdb
      m=/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so
      printf "auth required $m passdb=\(prefix)/passdb\\naccount required $m passdb=\(prefix)/passdb\\n" > \(prefix)/pam.d/passlock
      """)
  }

  deinit {
    _ = try? Self.sh("userdel \(user) 2>/dev/null; rm -rf \(prefix)")
  }

  @discardableResult
  static func sh(_ script: String) throws -> Harness.Output {
    let h = Harness()
    h.environment["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
    let out = h.run("/bin/sh", ["-c", script], input: Data())
    if out.status != 0 { throw ShellError(script: script, output: out.stderr) }
    return out
  }

  struct ShellError: Error {
    var script: String
    var output: String
  }

  /// Runs a command as the test user, with an environment that tries to move
  /// the store, lower the hash cost and swap the PAM directory.
  func asUser(_ arguments: [String], input: String = "") -> Harness.Output {
    let h = Harness()
    h.environment = [:]
    return h.run(
      "/usr/bin/setpriv",
      [
        "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
        "HOME=/tmp", "PASSLOCK_STATE_DIR=\(prefix)/evil", "PASSLOCK_HASH_COST=1",
        "PASSLOCK_PAM_CONFIG_DIR=\(prefix)/evil-pam",
      ] + arguments,
      input: Data(input.utf8))
  }

  func passlock(_ arguments: String..., input: String = "") -> Harness.Output {
    asUser(["\(prefix)/bin/passlock"] + arguments, input: input)
  }

  @Test func theStoreIsRootsAndTheAccountPasswordGuardsIt() throws {
    let status = passlock("status", "--json")
    #expect(
      status.stdout == """
        {"passcode_set":false,"length":0,"failed_attempts":0,"retry_after_seconds":0,"account_password_required":false,\
        "password_first":null,"store":"system","store_directory":"\(storeDirectory)","user":"\(user)","daemon":null}

        """, "\(status.stderr)")

    let badPassword = passlock("set", "--stdin", input: "2580\n2580\nnotit\n")
    #expect(badPassword.status == 2)
    #expect(badPassword.stderr == "Error: The account password was not accepted (Authentication failure).\n")
    let set = passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n")
    #expect(set.status == 0, "\(set.stderr)")

    var st = stat()
    #expect(stat(storeDirectory, &st) == 0)
    #expect(st.st_uid == 0 && st.st_mode & 0o777 == 0o700)
    #expect(stat(storeDirectory + "/passcode", &st) == 0)
    #expect(st.st_uid == 0 && st.st_mode & 0o777 == 0o600)
    let record = try String(contentsOfFile: storeDirectory + "/passcode", encoding: .utf8)
    #expect(record.contains("hash=$y$") && !record.contains("hash=$y$j75$"), "the cost was calibrated, not the caller's")
    #expect(!FileManager.default.fileExists(atPath: "\(prefix)/evil"), "PASSLOCK_STATE_DIR is ignored")

    let peek = asUser(["/bin/cat", storeDirectory + "/passcode"])
    #expect(peek.status != 0 && peek.stdout.isEmpty, "the user cannot read the hash")
    let scribble = asUser(["/bin/sh", "-c", "echo 'passlock-attempts 1' > \(storeDirectory)/attempts"])
    #expect(scribble.status != 0, "the user cannot reset the counter")

    #expect(passlock("verify", "--stdin", input: "2580\n").status == 0)
    #expect(passlock("verify", "--stdin", input: "1111\n").status == 1)
  }

  @Test func theTenthFailureRequiresTheAccountPassword() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    // Root skips the waits of failures 5–9: nine failures, the delay over.
    try "passlock-attempts 1\nfailures=9\nretry_after=0\nlast_wrong=\n"
      .write(toFile: storeDirectory + "/attempts", atomically: false, encoding: .utf8)
    let tenth = passlock("verify", "--stdin", input: "9999\n")
    #expect(tenth.stderr.contains("Failed attempts: 10."))
    let locked = passlock("verify", "--stdin", input: "2580\n")
    #expect(locked.status == 77)
    #expect(passlock("reset", "--stdin", input: "notit\n").status == 2)
    #expect(passlock("verify", "--stdin", input: "2580\n").status == 77)
    #expect(passlock("reset", "--stdin", input: "secretpw\n").status == 0)
    #expect(passlock("verify", "--stdin", input: "2580\n").status == 0)
  }

  @Test func theModuleInAUserProcessAsksTheSetuidGatekeeper() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    let right = asUser(["\(prefix)/bin/pam-cycles", "\(prefix)/module.d", "passcode-test", user, "2580", "3"])
    #expect(right.stdout == "3 0\n", "\(right.stderr)")
    let wrong = asUser(["\(prefix)/bin/pam-cycles", "\(prefix)/module.d", "passcode-test", user, "1111", "1"])
    #expect(wrong.stdout == "0 1\n")
    #expect(passlock("status", "--json").stdout.contains("\"failed_attempts\":1,"))
    let peek = asUser(["/bin/cat", storeDirectory + "/passcode"])
    #expect(peek.status != 0, "the user still cannot read the store")
  }

  /// A fresh VT owned by the test user (as login(1) leaves it) on screen,
  /// the shared console lock held; everything restored afterwards.
  func onTheUsersConsole(_ body: (VirtualConsoleTests.FreeConsole, UInt16) throws -> Void) throws {
    try ConsoleAccess.acquire()
    defer { ConsoleAccess.release() }
    let original = VirtualConsoleTests.activeConsole()
    let vt = try VirtualConsoleTests.FreeConsole()
    defer {
      _ = try? Self.sh("\(prefix)/bin/passlock-vt --release; pkill -9 -f 'passlock lock --tty /dev/tty' || true")
      try? ConsoleHolderTests.activate(Int32(original))
      chown("/dev/tty\(vt.number)", 0, 5)
      vt.release()
    }
    chown("/dev/tty\(vt.number)", uid, 5)
    try ConsoleHolderTests.activate(vt.number)
    try body(vt, original)
  }

  /// The installed passlock-vt started as the test user (real ids theirs,
  /// the setuid bit making it root) to lock `vt`.
  func startConsoleHolderAsTheUser(vt: Int32, holder path: String? = nil) throws -> pid_t {
    try #require(
      Spawn.start(
        [
          "/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--", path ?? "\(prefix)/bin/passlock-vt", "--vt",
          String(vt),
        ],
        environment: ["PATH": "/usr/bin:/bin"]))
  }

  @Test(.enabled(if: access("/dev/tty0", W_OK) == 0 && LogindState.canFake, "needs kernel virtual consoles and no logind"))
  func theConsoleHolderRunsTheLockScreenAsTheUser() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    try onTheUsersConsole { vt, _ in
      let logind = LogindState()
      try logind.activate(session: "7", uid: uid, vt: vt.number)
      var holder: pid_t = 0
      defer { if holder > 0 { kill(holder, SIGKILL) } }
      holder = try startConsoleHolderAsTheUser(vt: vt.number)
      // Its command line is the lock screen's once it has exec'd: its
      // credentials are final then.
      let lockScreen = Wait.value(10, every: 20_000) {
        Harness().run("/usr/bin/pgrep", ["-f", "passlock lock --tty /dev/tty"], input: Data()).stdout
          .split(separator: "\n").compactMap { pid_t($0) }.first
      }
      let pid = try #require(lockScreen, "the lock screen started")
      let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
      let line = { (key: String) in status.split(separator: "\n").first { $0.hasPrefix(key + ":") }.map(String.init) ?? "" }
      #expect(line("Uid") == "Uid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)", "real, effective, saved and fs uid are the user's")
      #expect(line("Gid") == "Gid:\t\(gid)\t\(gid)\t\(gid)\t\(gid)")
      #expect(line("Groups") == "Groups:\t\(gid) ", "only the user's groups")
      #expect(line("CapEff") == "CapEff:\t0000000000000000", "no capabilities")
      #expect(line("CapPrm") == "CapPrm:\t0000000000000000")
      // Not dumpable: the user's other processes cannot open its pipes to the
      // gatekeeper through /proc/PID/fd (nor ptrace it); its /proc is root's.
      var entry = stat()
      #expect(stat("/proc/\(pid)/fd", &entry) == 0 && entry.st_uid == 0, "the lock screen's /proc/PID/fd is root's")
      #expect(asUser(["/bin/ls", "/proc/\(pid)/fd"]).status != 0, "the user cannot list the lock screen's descriptors")
      let lockVT = Int32(VirtualConsoleTests.activeConsole())
      #expect(lockVT != vt.number)
      // A second holder while one runs would unlock switching over the first.
      let second = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(second.status == 1, "\(second.stderr)")
      #expect(VirtualConsoleTests.activeConsole() == lockVT, "the first lock holds")
      let fd = open("/dev/tty\(lockVT)", O_RDWR | O_NOCTTY)
      for var byte in Array("2580".utf8) { _ = ioctl(fd, UInt(TIOCSTI), &byte) }
      close(fd)
      #expect(Spawn.wait(holder, seconds: 10) == 0, "the user's passcode unlocks through the setuid gatekeeper")
      holder = 0
      #expect(VirtualConsoleTests.activeConsole() == vt.number)
    }
  }

  /// The hijack: the user made their own VT the active one (as VT_ACTIVATE
  /// from their console login does) while logind has somebody else's session
  /// on the seat. Their console holder is refused and the console untouched.
  @Test(.enabled(if: access("/dev/tty0", W_OK) == 0 && LogindState.canFake, "needs kernel virtual consoles and no logind"))
  func aUserCannotLockOverAnotherUsersSession() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    try onTheUsersConsole { vt, original in
      let logind = LogindState()
      // Without logind nothing says whose session is on screen: root only.
      var run = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(run.status == 1)
      #expect(run.stderr.contains("systemd-logind does not run"), "\(run.stderr)")
      #expect(VirtualConsoleTests.activeConsole() == vt.number, "the console is untouched")
      // logind: root's session on the original VT is the seat's active one.
      try logind.activate(session: "2", uid: 0, vt: Int32(original))
      run = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(run.status == 1)
      #expect(run.stderr.contains("the session on screen (2) is not yours"), "\(run.stderr)")
      #expect(VirtualConsoleTests.activeConsole() == vt.number, "the console is untouched")
      try ConsoleHolderTests.activate(Int32(original))
      #expect(VirtualConsoleTests.activeConsole() == original, "switching is not locked")
      // Their own session, but on another VT than the one they name: refused too.
      try ConsoleHolderTests.activate(vt.number)
      try logind.activate(session: "7", uid: uid, vt: Int32(original))
      run = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(run.status == 1)
      #expect(run.stderr.contains("is on VT \(original), not VT \(vt.number)"), "\(run.stderr)")
    }
  }

  /// The hijack with a session of their own: the user's session is the
  /// active one, but another user has a session on the seat too. A console
  /// lock would lock switching for the whole console and shut them out, so
  /// the holder refuses (status 4: passlockd then locks the session's own
  /// terminal). A greeter is not a user's session.
  @Test(.enabled(if: access("/dev/tty0", W_OK) == 0 && LogindState.canFake, "needs kernel virtual consoles and no logind"))
  func aUserCannotLockTheConsoleWhileAnotherUserHasASessionOnTheSeat() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    try onTheUsersConsole { vt, original in
      let logind = LogindState()
      try logind.activate(session: "7", uid: uid, vt: vt.number)
      try logind.add(session: "3", uid: 0, vt: Int32(original))
      let run = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(run.status == 4, "\(run.stderr)")
      #expect(run.stderr.contains("another user has a session on this seat (3 (uid 0, VT \(original)))"), "\(run.stderr)")
      #expect(VirtualConsoleTests.activeConsole() == vt.number, "the console is untouched")
      #expect(!FileManager.default.fileExists(atPath: "/run/passlock-vt.state"), "nothing recorded")
      try ConsoleHolderTests.activate(Int32(original))
      #expect(VirtualConsoleTests.activeConsole() == original, "switching is not locked")
      try ConsoleHolderTests.activate(vt.number)
      // A display manager's greeter on the seat does not count.
      logind.clear()
      try logind.activate(session: "7", uid: uid, vt: vt.number)
      try logind.add(session: "c1", uid: 0, vt: Int32(original), sessionClass: "greeter")
      var holder: pid_t = 0
      defer { if holder > 0 { kill(holder, SIGKILL) } }
      holder = try startConsoleHolderAsTheUser(vt: vt.number)
      var lockVT: Int32 = 0
      Wait.until(10, every: 20_000) {
        lockVT = Int32(VirtualConsoleTests.activeConsole())
        return lockVT != vt.number && ConsoleHolderTests.screen(lockVT).contains("Enter Passcode")
      }
      #expect(lockVT != vt.number, "with only a greeter beside it the console locks")
      let fd = open("/dev/tty\(lockVT)", O_RDWR | O_NOCTTY)
      for var byte in Array("2580".utf8) { _ = ioctl(fd, UInt(TIOCSTI), &byte) }
      close(fd)
      #expect(Spawn.wait(holder, seconds: 10) == 0)
      holder = 0
    }
  }

  /// A hard link of passlock-vt beside a program of the user's named
  /// passlock-auth (possible where fs.protected_hardlinks is off): the
  /// holder's own status check starts it with the caller's ids only, never
  /// as root.
  @Test(.enabled(if: access("/dev/tty0", W_OK) == 0 && LogindState.canFake, "needs kernel virtual consoles and no logind"))
  func theHoldersStatusCheckNeverRunsASiblingAsRoot() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    let evil = prefix + "/evil-link"
    try Self.sh(
      """
      set -e
      mkdir -m 777 \(evil)
      ln \(prefix)/bin/passlock-vt \(evil)/passlock-vt
      ln -s \(prefix)/bin/passlock \(evil)/passlock
      printf '#!/usr/bin/python3\\nimport os\\nopen("\(evil)/euid", "w").write(str(os.geteuid()))\\n' > \(evil)/passlock-auth
      chmod 755 \(evil)/passlock-auth
      """)
    try onTheUsersConsole { vt, _ in
      let logind = LogindState()
      try logind.activate(session: "7", uid: uid, vt: vt.number)
      // The sibling gives no answer: the lock stands (fail closed), and the
      // lock screen (the real passlock, whose own gatekeeper answers) unlocks.
      var holder: pid_t = 0
      defer { if holder > 0 { kill(holder, SIGKILL) } }
      holder = try startConsoleHolderAsTheUser(vt: vt.number, holder: "\(evil)/passlock-vt")
      #expect(Wait.until(15) { access(evil + "/euid", F_OK) == 0 }, "the sibling ran")
      let euid = try String(contentsOfFile: evil + "/euid", encoding: .utf8)
      #expect(euid == String(uid), "the sibling ran as the caller (\(uid)), not as root: \(euid)")
      let lockVT = Int32(VirtualConsoleTests.activeConsole())
      #expect(lockVT != vt.number, "locked on a VT of its own")
      #expect(Wait.until(15) { ConsoleHolderTests.screen(lockVT).contains("Enter Passcode") }, "the lock screen runs")
      ConsoleHolderTests.type("2580", onVT: lockVT)
      #expect(Spawn.wait(holder, seconds: 20) == 0, "the passcode unlocks")
      holder = 0
    }
  }

  /// Pre-flight: no passcode (or no way to start the lock screen) is refused
  /// before the console is touched: never a console only root could reopen.
  @Test(.enabled(if: access("/dev/tty0", W_OK) == 0 && LogindState.canFake, "needs kernel virtual consoles and no logind"))
  func noPasscodeIsRefusedBeforeTheConsoleIsTouched() throws {
    try onTheUsersConsole { vt, _ in
      let logind = LogindState()
      try logind.activate(session: "7", uid: uid, vt: vt.number)
      let run = asUser(["\(prefix)/bin/passlock-vt", "--vt", String(vt.number)])
      #expect(run.status == 1)
      #expect(run.stderr.contains("the lock screen cannot start: No passcode is set"), "\(run.stderr)")
      #expect(VirtualConsoleTests.activeConsole() == vt.number, "the console is untouched")
      #expect(!FileManager.default.fileExists(atPath: "/run/passlock-vt.state"), "nothing recorded")
    }
  }

  /// The setuid gatekeeper clears its environment, so pam_fprintd in it finds
  /// fprintd only on the system bus at the standard path: the fixture gives
  /// it a private one there, in a mount namespace of its own, with the real
  /// fprintd and its virtual reader, and runs the lock screen as the user.
  @Test(.enabled(if: FprintdBed.available, "needs fprintd, libpam-fprintd and python3-dbusmock"))
  func theSetuidGatekeeperRunsTheRealFingerprintReader() throws {
    #expect(passlock("set", "--stdin", input: "2580\n2580\nsecretpw\n").status == 0)
    try Self.sh(
      """
      set -e
      printf 'auth required pam_fprintd.so max-tries=1 timeout=10\\naccount required pam_permit.so\\n' > \(prefix)/pam.d/passlock-external
      mkdir -p \(prefix)/fp/config/passlock
      printf '[External]\\nEnabled=yes\\nAutoStart=yes\\nArmDelaySec=0\\n' > \(prefix)/fp/config/passlock/passlock.conf
      """)
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../Fixtures/setuid-fprintd.py").standardized.path
    let h = Harness()
    h.environment["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
    let run = h.run(
      "/usr/bin/unshare", ["--mount", "--", "/usr/bin/python3", fixture, user, String(uid), String(gid), prefix, prefix + "/fp"],
      input: Data())
    let seen = Dictionary(
      run.stdout.split(separator: "\n").compactMap { line in
        line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
      },
      uniquingKeysWith: { $1 })
    let story = "\(run.stdout)\(run.stderr)"
    #expect(seen["enrolled"] == "True", "\(story)")
    #expect(seen["prompt"] == "True", "pam_fprintd's message on the lock screen\n\(story)")
    #expect(seen["not_recognized"] == "True", "\(story)")
    #expect(seen["failures_after_wrong_finger"] == "1", "the wrong finger counted in the root-held store\n\(story)")
    #expect(seen["prompt_again"] == "True", "the reader runs again on Space\n\(story)")
    #expect(seen["failures_while_retrying"] == "2", "the retry is counted before it runs\n\(story)")
    #expect(seen["exit"] == "0", "the right finger unlocks\n\(story)")
    #expect(seen["failures_after_match"] == "0", "a match resets the counter\n\(story)")
  }

  @Test func aConfigNotOwnedByRootIsRefused() throws {
    try Self.sh("chown \(uid) \(prefix)/etc/passlock/passlock.conf")
    let status = passlock("status")
    #expect(status.status == 74)
    #expect(
      status.stderr
        == "Error: refusing \(prefix)/etc/passlock/passlock.conf: it must be owned by root and writable only by root ('chown root \(prefix)/etc/passlock/passlock.conf; chmod go-w \(prefix)/etc/passlock/passlock.conf')\n"
    )
  }
}
