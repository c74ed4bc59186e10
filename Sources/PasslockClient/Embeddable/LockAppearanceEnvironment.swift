// The Embedded programs compile this file into their own module (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

extension LockAppearance {
  /// The appearance for `config` with the language (LC_ALL, LC_MESSAGES or
  /// LANG, the first set) and NO_COLOR from this process's environment: the
  /// lock screen's, and the console holder's for the frame it paints (it
  /// passes the lock screen these same variables).
  public init(configuredBy config: Config) {
    self.init(
      config: config, locale: environment("LC_ALL") ?? environment("LC_MESSAGES") ?? environment("LANG"),
      noColor: environment("NO_COLOR").map { !$0.isEmpty } ?? false)
  }
}
