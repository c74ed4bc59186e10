import CLinux
import Glibc

/// A child started with posix_spawn(3) (never fork without exec), its standard
/// input and output connected to pipes held by the parent.
public struct ChildProcess: Sendable {
  public let pid: pid_t
  /// Write end of the child's standard input.
  public let input: FileDescriptor
  /// Read end of the child's standard output.
  public let output: FileDescriptor

  /// Spawns `path` with `arguments` (argv[0] included); standard error is
  /// shared; `terminal`, if given, is the child's descriptor 3; no other
  /// descriptor is passed on. `resetIDs` as for `launch`.
  public static func spawn(
    _ path: String, arguments: [String], terminal: Int32? = nil, environment: [String]? = nil, resetIDs: Bool = false
  ) throws(SystemError) -> ChildProcess {
    let toChild = try closeOnExecPipe()
    let fromChild: (read: Int32, write: Int32)
    do { fromChild = try closeOnExecPipe() } catch {
      Glibc.close(toChild.read)
      Glibc.close(toChild.write)
      throw error
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // dup2 clears O_CLOEXEC on the targets; every other descriptor stays closed.
    posix_spawn_file_actions_adddup2(&actions, toChild.read, 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild.write, 1)
    // The actions run in order: take the terminal from a copy that none of
    // the dup2s above can have replaced (it may be our descriptor 0).
    let terminalCopy = terminal.map { passlock_fcntl($0, F_DUPFD_CLOEXEC, 10) } ?? -1
    if terminalCopy >= 0 { posix_spawn_file_actions_adddup2(&actions, terminalCopy, 3) }
    var pid: pid_t = 0
    let rc = cleanSpawn(
      &pid, path, arguments, &actions, passingUpTo: terminalCopy >= 0 ? 3 : 2, environment: environment, resetIDs: resetIDs)
    if terminalCopy >= 0 { Glibc.close(terminalCopy) }
    Glibc.close(toChild.read)
    Glibc.close(fromChild.write)
    guard rc == 0 else {
      Glibc.close(toChild.write)
      Glibc.close(fromChild.read)
      throw SystemError("posix_spawn", path: path, errno: rc)
    }
    return ChildProcess(
      pid: pid, input: FileDescriptor(rawValue: toChild.write), output: FileDescriptor(rawValue: fromChild.read))
  }

  /// Starts `path` with standard input from /dev/null, standard output and
  /// error shared, each `descriptors` pair (parent fd → child fd) mapped in,
  /// and no other descriptor.
  /// `environment` nil passes ours on. `resetIDs` (POSIX_SPAWN_RESETIDS) starts
  /// the child with its effective uid and gid set to our real ones: a setuid
  /// program's way to run something as its caller.
  public static func launch(
    _ path: String, arguments: [String], descriptors: [(parent: Int32, child: Int32)] = [],
    environment: [String]? = nil, resetIDs: Bool = false
  ) throws(SystemError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    // The child's dup2s run in order: a parent descriptor whose number an
    // earlier mapping (or stdin) takes would be overwritten before its own
    // turn. Such ones go in from a copy above every number mapped.
    let highest = max(2, descriptors.map({ $0.child }).max() ?? 2)
    var copies: [Int32] = []
    defer { for copy in copies { close(copy) } }
    var taken: Set<Int32> = [0]
    for (parent, child) in descriptors {
      var source = parent
      if taken.contains(parent) {
        source = passlock_fcntl(parent, F_DUPFD_CLOEXEC, highest + 1)
        guard source >= 0 else { throw SystemError("fcntl") }
        copies.append(source)
      }
      posix_spawn_file_actions_adddup2(&actions, source, child)
      taken.insert(child)
    }
    var pid: pid_t = 0
    let rc = cleanSpawn(
      &pid, path, arguments, &actions, passingUpTo: highest, environment: environment, resetIDs: resetIDs)
    guard rc == 0 else { throw SystemError("posix_spawn", path: path, errno: rc) }
    return pid
  }

  /// Waits for the child; its exit status, or 128 + signal number.
  public func wait() -> Int32 {
    guard let status = waitStatus(of: pid) else { return 127 }
    return exitCode(fromWaitStatus: status)
  }
}

/// posix_spawn with a clean start: no blocked signals and default handlers
/// (the lock screen ignores SIGINT and friends, a daemon's threads block
/// signals; children must inherit neither), and no descriptor above
/// `highest` (stdout and stderr at least stay): not even one our own caller
/// left open without close-on-exec.
func cleanSpawn(
  _ pid: inout pid_t, _ path: String, _ arguments: [String], _ actions: inout posix_spawn_file_actions_t,
  passingUpTo highest: Int32, environment: [String]? = nil, resetIDs: Bool = false
) -> Int32 {
  // After the caller's actions: it closes only what they did not map in.
  let rc = posix_spawn_file_actions_addclosefrom_np(&actions, highest + 1)
  guard rc == 0 else { return rc }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var empty = sigset_t()
  var all = sigset_t()
  sigemptyset(&empty)
  sigfillset(&all)
  posix_spawnattr_setsigmask(&attributes, &empty)
  posix_spawnattr_setsigdefault(&attributes, &all)
  let flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (resetIDs ? POSIX_SPAWN_RESETIDS : 0)
  posix_spawnattr_setflags(&attributes, Int16(flags))
  let argv = arguments.map { strdup($0) } + [nil]
  let envp = environment.map { $0.map { strdup($0) } + [nil] }
  defer {
    for argument in argv { free(argument) }
    for variable in envp ?? [] { free(variable) }
  }
  guard var envp else { return posix_spawn(&pid, path, &actions, &attributes, argv, environ) }
  return posix_spawn(&pid, path, &actions, &attributes, argv, &envp)
}

/// pidfd_open(2): a descriptor of `pid` that polls readable once it exited.
public func processDescriptor(_ pid: pid_t) throws(SystemError) -> Int32 {
  let fd = passlock_pidfd_open(pid)
  guard fd >= 0 else { throw SystemError("pidfd_open") }
  return fd
}

/// Waits for child `pid`: its wait status, or nil when waitpid cannot report
/// one (ECHILD: with SIGCHLD ignored the kernel reaps children itself). Callers
/// must treat nil as a failure, never as an exit 0.
public func waitStatus(of pid: pid_t) -> Int32? {
  var status: Int32 = 0
  while waitpid(pid, &status, 0) == -1 {
    guard errno == EINTR else { return nil }
  }
  return status
}

/// The exit status of a finished child as waitpid reported it: its exit code,
/// or 128 + the signal that killed it.
public func exitCode(fromWaitStatus status: Int32) -> Int32 {
  status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}
