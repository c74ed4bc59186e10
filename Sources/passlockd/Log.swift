#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Daemon logs on stderr with the priority prefixes journald reads
/// (<3> error, <4> warning, <6> info, <7> debug). Never a secret.
enum Log {
  static func error(_ text: String) { write(3, text) }
  static func warning(_ text: String) { write(4, text) }
  static func info(_ text: String) { write(6, text) }

  private static func write(_ priority: Int, _ text: String) {
    printError("<\(priority)>" + text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ") + "\n")
  }
}
