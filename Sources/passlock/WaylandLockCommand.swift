import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockCore
  import PasslockPOSIX
#endif

/// `passlock lock --wayland`: the Wayland session's lock screen is
/// passlock-wayland, installed beside this program (its own package, since it
/// links cairo). This process becomes it (exec): the descriptors,
/// the environment (WAYLAND_DISPLAY, XDG_RUNTIME_DIR) and the exit status
/// are its.
extension Commands {
  func lockWayland(readyFD: Int32?, record: String?, graceMilliseconds: Int32?) throws(CommandFailure) -> Never {
    let path = Executable.sibling("passlock-wayland")
    var arguments = ["passlock-wayland"]
    if let readyFD { arguments += ["--ready-fd", String(readyFD)] }
    if let record { arguments += ["--record", record] }
    if let graceMilliseconds { arguments += ["--grace-ms", String(graceMilliseconds)] }
    let argv = arguments.map { strdup($0) } + [nil]
    execv(path, argv)
    let reason = String(cString: strerror(errno))
    throw .noSessionLock(
      "cannot run \(path) (\(reason)); install the passlock-wayland package for the Wayland lock screen")
  }
}
