import Glibc
#if !PASSLOCK_ONE_MODULE
  import PasslockBus
  import PasslockClient
  import PasslockCore
  import PasslockPOSIX
#endif

/// What passlockd waits on: the bus, its children, the gatekeeper's
/// removal, compositors' sockets appearing, and systemd's watchdog.
extension Daemon {
  func watchBus() {
    // The socket, and the bus's own signal that signals read during a call wait.
    for fd in [bus.fd, bus.wakeFD] {
      loop.watch(fd) { [self] in
        if !bus.process() {
          Log.error("lost the system bus; exiting so systemd restarts passlockd")
          exit(1)
        }
      }
    }
    bus.process()
  }

  func watchChildren() {
    // SignalPipe (main.swift) turns SIGCHLD into a byte the loop reads.
    // Every child is reaped here, lockers killed on purpose too. A gatekeeper
    // run in the background may be reaped before its request is read: its
    // answer comes through its pipe, its exit status is not needed.
    loop.onSignal(SIGCHLD) { [self] in
      var status: Int32 = 0
      while true {
        let pid = waitpid(-1, &status, WNOHANG)
        if pid <= 0 { break }
        lockerExited(pid: pid, status: exitCode(fromWaitStatus: status))
      }
    }
  }

  /// Exit status when passlock was uninstalled under us; the unit neither
  /// restarts on it nor calls it a failure (a restart would only fail to exec
  /// again and again).
  static let uninstalledStatus: Int32 = 69

  /// Exits cleanly once the gatekeeper is removed from the system (the
  /// package was removed): without it nothing can be locked or unlocked.
  func watchUninstall() {
    guard let watch = RemovalWatch(path: gatekeeper.path) else { return }
    loop.watch(watch.fd) {
      guard watch.fileIsGone() else { return }
      Log.info("\(watch.path) was removed (passlock was uninstalled); passlockd exits")
      exit(Daemon.uninstalledStatus)
    }
  }

  /// A new `wayland-*` socket in the runtime directory: a compositor
  /// started (or one came back). Sessions its idle notification could not
  /// time are looked at again, and a Hyprland is asked about its lock
  /// restore; a moment later, since a compositor listens just after it binds.
  func watchCompositorSockets() {
    guard let runtime = environment("XDG_RUNTIME_DIR"),
      let watch = DirectoryWatch(directory: runtime, events: Int32(IN_CREATE | IN_MOVED_TO))
    else { return }
    loop.watch(watch.fd) { [self] in
      let changes = watch.changes()
      guard changes.overflowed || changes.names.contains(where: WaylandCompositors.isSocketName) else { return }
      // Looked at a few times: a compositor may take a while to listen, or
      // to be known in its session, on a busy machine.
      for delay: Int64 in [500, 2000, 5000] {
        loop.after(milliseconds: delay) { [self] in
          lookForIdleCompositorsAgain()
          checkHyprlandLockRestore()
        }
      }
    }
  }

  func startWatchdog() {
    guard let usec = ServiceManager.watchdogMicroseconds() else { return }
    loop.after(microseconds: 0, repeating: Int64(usec / 2)) { ServiceManager.notify("WATCHDOG=1") }
  }
}
