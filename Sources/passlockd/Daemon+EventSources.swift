import Dispatch
import Glibc
import PasslockBus
import PasslockClient
import PasslockCore
import PasslockPOSIX

/// What passlockd waits on: the bus, its children, the gatekeeper's
/// removal, and systemd's watchdog.
extension Daemon {
  func watchBus() {
    let source = DispatchSource.makeReadSource(fileDescriptor: bus.fd, queue: .main)
    source.setEventHandler { [unowned self] in
      MainActor.assumeIsolated {
        if !bus.process() {
          Log.error("lost the system bus; exiting so systemd restarts passlockd")
          exit(1)
        }
      }
    }
    source.resume()
    sources.append(source)
    bus.process()
  }

  func watchChildren() {
    let source = DispatchSource.makeSignalSource(signal: SIGCHLD, queue: .main)
    source.setEventHandler { [unowned self] in
      MainActor.assumeIsolated {
        var status: Int32 = 0
        while true {
          let pid = waitpid(-1, &status, WNOHANG)
          if pid <= 0 { break }
          lockerExited(pid: pid, status: exitCode(fromWaitStatus: status))
        }
      }
    }
    source.resume()
    sources.append(source)
  }

  /// Exit status when passlock was uninstalled under us; the unit neither
  /// restarts on it nor calls it a failure (a restart would only fail to exec
  /// again and again).
  static let uninstalledStatus: Int32 = 69

  /// Exits cleanly once the gatekeeper is removed from the system (the
  /// package was removed): without it nothing can be locked or unlocked.
  func watchUninstall() {
    guard let watch = RemovalWatch(path: gatekeeper.path) else { return }
    let source = DispatchSource.makeReadSource(fileDescriptor: watch.fd, queue: .main)
    source.setEventHandler {
      MainActor.assumeIsolated {
        guard watch.fileIsGone() else { return }
        Log.info("\(watch.path) was removed (passlock was uninstalled); passlockd exits")
        exit(Daemon.uninstalledStatus)
      }
    }
    source.resume()
    sources.append(source)
  }

  func startWatchdog() {
    guard let usec = ServiceManager.watchdogMicroseconds() else { return }
    let timer = DispatchSource.makeTimerSource(queue: .main)
    timer.schedule(deadline: .now(), repeating: .microseconds(Int(usec / 2)))
    timer.setEventHandler { ServiceManager.notify("WATCHDOG=1") }
    timer.resume()
    sources.append(timer)
  }
}
