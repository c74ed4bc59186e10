// swift-tools-version:6.0
// Targets follow what they link (see ../shared/CONVENTIONS.md): one
// system-library target per C library, a pure core, a POSIX layer, and thin
// executables on top.
import PackageDescription

/// `passlock-auth` and `passlock-vt` link the Swift runtime statically: they
/// run setuid and must not depend on the toolchain's install path. They stay
/// dynamic PIE executables: ASLR covers them, PAM loads its modules with
/// dlopen, and glibc's static-pie output here had no RELRO.
/// Both run setuid: full RELRO (`-z now`: the GOT is read-only once loaded).
/// Both start on the console lock's critical path, so the C++ runtime the
/// Swift runtime needs is linked in too (Sources/CLinux/static holds a
/// `libstdc++.a` that points at GCC's archive; libgcc's unwinder likewise),
/// and only the program's own few symbols are exported: loading and binding
/// libstdc++.so and libgcc_s.so cost 0.6 ms of a 2 ms start.
let staticRuntime: [LinkerSetting] = [
  .unsafeFlags([
    "-static-stdlib", "-Xlinker", "-z", "-Xlinker", "now",
    "-L", "\(Context.packageDirectory)/Sources/CLinux/static", "-Xclang-linker", "-static-libgcc",
    "-Xlinker", "--no-export-dynamic",
  ])
]
/// `passlock` (the lock screen) and `passlockd` are fully static executables:
/// no dynamic loader, no libstdc++ mapped, about half the memory and start-up
/// time. They therefore avoid NSS (getpwuid): the gatekeeper reports the user name.
let fullyStatic: [LinkerSetting] = [.unsafeFlags(["-static-executable"])]
/// Their memory is mostly code, faulted in 64 KiB at a time around first
/// uses: lld puts the functions a lock runs first, in the order
/// scripts/lock-screen-order recorded (lock screen 4.6 → 3.0 MiB while
/// locked). passlockd shares most of them, the Swift runtime's start and the
/// standard library's (idle 4.9 → 4.2 MiB). The build does not track that
/// file: a new one needs a fresh link.
let lockScreenOrder: [LinkerSetting] = [
  .unsafeFlags([
    "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/passlock/lock-screen.order",
    "-Xlinker", "--no-warn-symbol-ordering",
    // As GNU ld does by default here: no data on the code's pages. And the
    // GOT (glibc's IRELATIVE slots) inside RELRO.
    "-Xlinker", "-z", "-Xlinker", "separate-code", "-Xlinker", "-z", "-Xlinker", "now",
    // The code starts on a 64 KiB boundary, the kernel's fault-around
    // window: the functions linked first fill whole windows from the first
    // (60 KiB less resident code than a start mid-window).
    "-Xlinker", "-z", "-Xlinker", "max-page-size=65536",
  ])
]
let package = Package(
  name: "passlock",
  products: [
    .executable(name: "passlock", targets: ["passlock"]),
    .executable(name: "passlock-auth", targets: ["passlock-auth"]),
    .executable(name: "passlockd", targets: ["passlockd"]),
    .executable(name: "passlock-vt", targets: ["passlock-vt"]),
    .executable(name: "passlock-docs", targets: ["passlock-docs"]),
    // Built as libpam_passlock.so; installed as pam_passlock.so.
    .library(name: "pam_passlock", type: .dynamic, targets: ["PAMPasslock"]),
    // A stand-in for pam_fprintd in tests; never installed.
    .library(name: "pam_passlock_test_external", type: .dynamic, targets: ["PAMTestExternal"]),
  ],
  targets: [
    .systemLibrary(name: "CPAM", path: "Sources/CPAM"),
    .systemLibrary(name: "CXCrypt", path: "Sources/CXCrypt"),
    // Linux calls Swift cannot make directly (prctl is variadic).
    .systemLibrary(name: "CLinux", path: "Sources/CLinux"),

    // Pure logic: policies, record formats, config parsing, protocol framing.
    // No C library, no I/O.
    .target(name: "PasslockCore"),
    // The syscall layer: file descriptors and errors, sockets (UnixSocket),
    // directories and small files, secure store files, termios, VT ioctls,
    // processes, clocks, the event loop. (Plain calls such as kill, access or
    // poll on one descriptor are still made where they are used.)
    .target(name: "PasslockPOSIX", dependencies: ["PasslockCore", "CLinux"]),
    // The password database (getpwuid_r): not for the static `passlock`.
    .target(name: "PasslockAccounts"),
    // The passcode store: yescrypt hashing and the on-disk records.
    .target(name: "PasslockStore", dependencies: ["PasslockCore", "PasslockPOSIX", "CXCrypt"]),
    // PAM: client transactions (account password) and the module side's calls.
    .target(name: "PasslockPAM", dependencies: ["PasslockPOSIX", "CPAM"]),
    // The system bus (D-Bus spoken directly) and sd_notify for passlockd.
    .target(name: "PasslockBus", dependencies: ["PasslockPOSIX"]),
    // What passlockd waits for on its event loop: idle timers, retries
    // (tested on a ManualClock).
    .target(name: "PasslockTimers", dependencies: ["PasslockCore", "PasslockPOSIX"]),
    // Talking to passlock-auth over its pipes.
    .target(name: "PasslockClient", dependencies: ["PasslockCore", "PasslockPOSIX"]),
    // pam_passlock.so: no Foundation, the Swift runtime linked in statically.
    .target(
      name: "PAMPasslock",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore", "PasslockPAM", "PasslockClient", "PasslockAccounts"],
      exclude: ["exports.map"],
      linkerSettings: [
        .unsafeFlags([
          "-static-stdlib",
          // The Swift runtime inside cannot be unloaded cleanly: its caches would
          // leak on every dlclose. NODELETE keeps one copy loaded across cycles.
          "-Xlinker", "-z", "-Xlinker", "nodelete",
          "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/PAMPasslock/exports.map",
        ])
      ]),

    .executableTarget(
      name: "passlock",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient"],
      exclude: ["lock-screen.order"],
      linkerSettings: fullyStatic + lockScreenOrder),
    .executableTarget(
      name: "passlock-vt",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient"],
      linkerSettings: staticRuntime),
    .executableTarget(
      name: "passlockd",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient", "PasslockBus", "PasslockTimers"],
      linkerSettings: fullyStatic + lockScreenOrder),
    .executableTarget(
      name: "passlock-auth",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore", "PasslockPAM", "PasslockAccounts"],
      linkerSettings: staticRuntime),

    .target(name: "PAMTestExternal", linkerSettings: [.linkedLibrary("pam")]),
    // A C PAM host for the module's load/authenticate/unload cycles (tests only).
    .executableTarget(name: "pam-cycles", linkerSettings: [.linkedLibrary("pam")]),
    // Build-time only: completion scripts and man page fragments from the CLI and config tables.
    .executableTarget(name: "passlock-docs", dependencies: ["PasslockCore"]),

    .testTarget(name: "PasslockCoreTests", dependencies: ["PasslockCore"]),
    .testTarget(name: "PasslockPOSIXTests", dependencies: ["PasslockPOSIX"]),
    .testTarget(name: "PasslockBusTests", dependencies: ["PasslockBus", "PasslockPOSIX"]),
    .testTarget(name: "PasslockTimersTests", dependencies: ["PasslockTimers", "PasslockCore", "PasslockPOSIX"]),
    .testTarget(
      name: "PasslockStoreTests",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore"]),
    // Runs the built executables; `swift build --build-tests` builds them
    // (depending on them here would pull their static-runtime flags into the test bundle).
    .testTarget(name: "EndToEndTests", dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockBus"]),
  ],
  swiftLanguageModes: [.v6]
)

// Nothing here uses regular expressions or Swift concurrency; importing them
// implicitly links their runtimes into every executable, and their metadata
// (kept by the linker, scanned by the runtime at start-up) costs about 1.3 MB
// of code and a share of every start. The tests keep them (Swift Testing is async).
// Type metadata is reached through accessor calls, not mangled names the
// runtime demangles on first use: the lock screen spent a quarter of its
// start-up there (perf), for a few KB more code.
let startUpSettings: [SwiftSetting] = [
  .unsafeFlags([
    "-Xfrontend", "-disable-implicit-string-processing-module-import",
    "-Xfrontend", "-disable-implicit-concurrency-module-import",
    "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
  ])
]
for target in package.targets where target.type != .test && target.type != .system {
  target.swiftSettings = (target.swiftSettings ?? []) + startUpSettings
}
