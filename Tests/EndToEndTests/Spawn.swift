import Foundation

/// posix_spawn for tests that need more than Foundation's Process gives: a
/// clean signal mask (the runner's threads block most signals) and extra
/// descriptors mapped into the child (`--ready-fd`).
enum Spawn {
  static func start(_ argv: [String], environment: [String: String], descriptors: [(parent: Int32, child: Int32)] = []) -> pid_t? {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t(), all = sigset_t()
    sigemptyset(&empty)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    for (parent, child) in descriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }
    let args: [UnsafeMutablePointer<CChar>?] = argv.map { word in word.withCString { strdup($0) } } + [nil]
    let env: [UnsafeMutablePointer<CChar>?] = environment.map { "\($0)=\($1)" }.map { word in word.withCString { strdup($0) } } + [nil]
    defer {
      args.forEach { free($0) }
      env.forEach { free($0) }
    }
    var pid: pid_t = 0
    guard posix_spawn(&pid, argv[0], &actions, &attributes, args, env) == 0 else { return nil }
    return pid
  }

  /// Waits up to `seconds` for `pid` to exit; its status, or nil if it is still running.
  static func wait(_ pid: pid_t, seconds: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(seconds)
    var status: Int32 = 0
    while Date() < deadline {
      if waitpid(pid, &status, WNOHANG) == pid { return (status >> 8) & 0xff }
      usleep(10_000)
    }
    return nil
  }
}

/// The kernel's consoles are one shared resource: tests that allocate, switch
/// or lock VTs take this first, whichever suite they are in (suites run in
/// parallel). A semaphore, since a test's init and deinit may run on
/// different threads.
enum ConsoleAccess {
  nonisolated(unsafe) static let semaphore = DispatchSemaphore(value: 1)  // DispatchSemaphore is thread-safe
  static func acquire() { semaphore.wait() }
  static func release() { semaphore.signal() }
}
