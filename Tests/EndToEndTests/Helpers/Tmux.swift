import Foundation
import Testing

/// A private tmux server running a shell on a real pty, for driving the lock
/// screen the way a person would: send-keys to type, capture-pane to read.
final class Tmux: @unchecked Sendable {  // used from one test at a time
  let socket = "passlock-test-" + UUID().uuidString.prefix(8)
  let harness: Harness

  init(_ harness: Harness, width: Int = 80, height: Int = 24) {
    self.harness = harness
    var env = ""
    for (key, value) in harness.environment { env += " -e '\(key)=\(value)'" }
    // The server outlives this call: it must hold no pipe of ours, nor one that
    // another test's process inherited while we spawned (tests run in parallel).
    let start = "tmux -L \(socket) -f /dev/null new-session -d -x \(width) -y \(height)\(env) 'PS1=\"$ \" exec bash --norc --noprofile'"
    Self.spawnClean("for fd in $(ls /proc/$$/fd); do [ $fd -gt 2 ] && eval \"exec $fd>&-\"; done; " + start + " </dev/null >/dev/null 2>&1")
    tmux("set-option -g status off")
    // The session's environment reaches the shell; the binaries are on PATH.
    // No history file: bash would write it into the harness's directory while it is being removed.
    type("export PATH='\(Harness.binDirectory)':$PATH TERM=xterm-256color HISTFILE=/dev/null; clear", enter: true)
    _ = waitFor { $0.hasPrefix("$") }
  }

  /// Runs a bash script with no blocked signals. The test runner's threads
  /// block most signals and children inherit that mask: a tmux server started
  /// with it can never hang up its shell, so kill-server would wait forever.
  static func spawnClean(_ script: String) {
    guard let pid = Spawn.start(["/bin/bash", "-c", script], environment: ProcessInfo.processInfo.environment) else { return }
    _ = Spawn.wait(pid, seconds: 10)
  }

  deinit {
    tmux("kill-server")
    unlink("/tmp/tmux-\(getuid())/\(socket)")
  }

  @discardableResult
  func tmux(_ command: String) -> Harness.Output {
    harness.run("/bin/sh", ["-c", "tmux -L \(socket) -f /dev/null \(command)"], input: Data())
  }

  /// Types literal text (tmux's -l: no key-name lookup).
  func type(_ text: String, enter: Bool = false) {
    let quoted = "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    tmux("send-keys -l \(quoted)")
    if enter { tmux("send-keys Enter") }
  }

  /// Sends tmux key names (C-c, Escape, Up, F1, BSpace…).
  func keys(_ names: String...) { tmux("send-keys " + names.joined(separator: " ")) }

  /// Sends raw bytes as they are, through tmux's hex mode.
  func bytes(_ bytes: [UInt8]) {
    for chunk in stride(from: 0, to: bytes.count, by: 500) {
      let hex = bytes[chunk..<min(chunk + 500, bytes.count)].map { String(format: "%02x", $0) }
      tmux("send-keys -H " + hex.joined(separator: " "))
    }
  }

  var screen: String { tmux("capture-pane -p").stdout }

  /// Waits up to `seconds` for the screen to satisfy `condition`; the last screen.
  @discardableResult
  func waitFor(_ seconds: Double = 5, _ condition: (String) -> Bool) -> String {
    var last = screen
    Wait.until(seconds, every: 20_000) {
      last = screen
      return condition(last)
    }
    return last
  }

  func waitFor(_ text: String, seconds: Double = 5) -> Bool {
    waitFor(seconds) { $0.contains(text) }.contains(text)
  }

  /// The pid of the foreground `passlock` in the pane's shell.
  var lockerPID: pid_t? {
    let shell = tmux("list-panes -F '#{pane_pid}'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let found = harness.run("/bin/sh", ["-c", "pgrep -P \(shell) -x passlock"], input: Data())
    return pid_t(found.stdout.split(separator: "\n").first ?? "")
  }
}
