import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// sd_notify's protocol, only where systemd asked for it (NOTIFY_SOCKET is set).
public enum ServiceManager {
  public static func notify(_ state: String) {
    guard let path = environment("NOTIFY_SOCKET"),
      let address = path.hasPrefix("@")
        ? UnixSocketAddress(abstract: String(path.dropFirst())) : path.hasPrefix("/") ? UnixSocketAddress(path: path) : nil
    else { return }
    UnixSocket.sendDatagram(state, to: address)
  }

  /// The watchdog interval systemd expects pings within, if any (WATCHDOG_USEC,
  /// for this process when WATCHDOG_PID says which).
  public static func watchdogMicroseconds() -> UInt64? {
    guard let text = environment("WATCHDOG_USEC"), let usec = UInt64(text), usec > 0 else { return nil }
    if let pid = environment("WATCHDOG_PID"), pid_t(pid) != getpid() { return nil }
    return usec
  }
}
