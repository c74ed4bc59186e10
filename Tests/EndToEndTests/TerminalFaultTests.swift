import Foundation
import PasslockCore
import Testing

/// The terminal lock screen fails closed: only an accepted verdict gives
/// the terminal back. The user's own program kills every gatekeeper as it
/// starts (Tests/Faults/kill_gatekeepers.py; the gatekeeper is started
/// under a name of this test's, so that other tests' are left alone), and
/// the store's file system fills up. Each time the terminal stays locked and
/// says why, and the passcode or the password unlocks once the fault is gone.
@Suite(
  .serialized,
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
    "needs tmux and /usr/bin/python3 (scripts/install-deps installs them)"))
struct TerminalFaultTests {
  /// With the status cached, the lock screen draws at once and then asks the
  /// gatekeeper: each request killed, it stays locked, says it cannot check,
  /// and asks again; the passcode typed meanwhile waits and unlocks once
  /// the fault has ended. (The old lock screen gave the terminal back at the
  /// first kill.)
  @Test func everyGatekeeperKilledWhileTheStatusIsAsked() throws {
    let (h, t, _) = AccountPasswordEndToEndTests.afterOneLock()
    let killer = GatekeeperKiller(in: h.root)
    try killer.start()
    t.type("clear; echo still-here; PASSLOCK_AUTH=\(killer.gatekeeper) passlock lock; echo rc2=$?", enter: true)
    #expect(t.waitFor("Can't check now", seconds: 10), "it says why it waits: \(t.screen)")
    t.type("2580")
    let during = t.waitFor(2) { $0.contains("rc2=") || $0.contains("still-here") }
    #expect(!during.contains("rc2=") && !during.contains("still-here"), "still locked: \(during)")
    #expect(killer.stop() > 0, "gatekeepers were killed")
    #expect(t.waitFor("rc2=0", seconds: 15), "the passcode typed during the fault unlocks once it ended")
  }

  /// A check's gatekeeper killed is no verdict: the right passcode does not
  /// unlock while it is killed, and does once the fault has ended.
  @Test func everyGatekeeperKilledDuringAPasscodeCheck() throws {
    let h = Harness()
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    let killer = GatekeeperKiller(in: h.root)
    let t = Tmux(h)
    t.type("clear; PASSLOCK_AUTH=\(killer.gatekeeper) passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter your passcode to unlock"))
    try killer.start()
    t.type("2580")
    #expect(t.waitFor("The passcode could not be checked. Try again."), "\(t.screen)")
    #expect(!t.screen.contains("rc="), "still locked")
    #expect(killer.stop() > 0, "gatekeepers were killed")
    Wait.pastShake()
    t.type("2580")
    #expect(t.waitFor("rc=0"), "the passcode unlocks once the fault ended")
  }

  /// The store on a full file system (root: a 64 KiB tmpfs): an attempt
  /// that cannot be recorded is not checked, nor counted; the lock screen
  /// says so in words and opens the account password field, and the
  /// password unlocks. With space back, the passcode works as before.
  @Test(.enabled(if: getuid() == 0, "mounts a tmpfs (root)"))
  func aFullStoreSaysSoAndThePasswordUnlocks() throws {
    let h = Harness()
    let full = h.root + "/full"
    mkdir(full, 0o700)
    try #require(h.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k,mode=700", "tmpfs", full], input: Data()).status == 0)
    defer { _ = h.run("/bin/umount", [full], input: Data()) }
    h.environment["PASSLOCK_STATE_DIR"] = full + "/store"
    h.passlock("set", "--stdin", input: "2580\n2580\n")
    h.accountPassword("hunter2")
    _ = h.run("/bin/dd", ["if=/dev/zero", "of=\(full)/filler", "bs=4k"], input: Data())
    let t = Tmux(h)
    t.type("clear; passlock lock; echo rc=$?", enter: true)
    #expect(t.waitFor("Enter your passcode to unlock"))
    t.type("2580")
    #expect(t.waitFor("Can't record attempts: the disk is full. Use your account password."), "\(t.screen)")
    #expect(t.waitFor("Password: ____"), "the field opens by itself")
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"), "nothing counted")
    t.type("hunter2")
    t.keys("Enter")
    #expect(t.waitFor("rc=0"), "the account password unlocks on a full disk")
    unlink(full + "/filler")
    t.type("clear; passlock lock; echo rc2=$?", enter: true)
    #expect(t.waitFor("Enter your passcode to unlock"))
    t.type("2580")
    #expect(t.waitFor("rc2=0"), "space back: the passcode unlocks")
    #expect(h.passlock("status", "--json").stdout.contains("\"failed_attempts\":0,"))
  }
}
