// swift-tools-version:6.0
// Targets follow what they link (see ../shared/CONVENTIONS.md): one
// system-library target per C library, a pure core, a POSIX layer, and thin
// executables on top.
import Glibc
import PackageDescription

/// `passlock-auth` (and `passlock-vt` where it is not built with Embedded
/// Swift: `consoleHolder`) link the Swift runtime statically: they run setuid and must not depend on the toolchain's install path. They stay
/// dynamic PIE executables: ASLR covers them, PAM loads its modules with
/// dlopen, and glibc's static-pie output here had no RELRO.
/// Both run setuid: full RELRO (`-z now`: the GOT is read-only once loaded).
/// Both start on the console lock's critical path, so the C++ runtime the
/// Swift runtime needs is linked in too (Sources/CLinux/static holds a
/// `libstdc++.so` linker script that takes GCC's archive from the compiler's
/// own search path; libgcc's unwinder likewise),
/// and only the program's own few symbols are exported: loading and binding
/// libstdc++.so and libgcc_s.so cost 0.6 ms of a 2 ms start.
/// Linked with lld (as the static programs are), whose linker scripts take
/// `-l:NAME` (gold's do not), with no data on the code's pages, as GNU ld
/// lays them out by default.
let staticRuntime: [LinkerSetting] = [
  .unsafeFlags([
    "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "now", "-Xlinker", "-z", "-Xlinker", "separate-code",
    "-L", "\(Context.packageDirectory)/Sources/CLinux/static", "-Xclang-linker", "-static-libgcc",
    "-Xlinker", "--no-export-dynamic",
  ])
]
/// `passlock` (the lock screen) and `passlockd` are fully static executables
/// in either build (this for their full-Swift one: `commandLine`, `daemon`):
/// no dynamic loader, no libstdc++ mapped, about half the memory and start-up
/// time. They therefore avoid NSS (getpwuid): the gatekeeper reports the user name.
/// Sources/CLinux/static supplies what Swift 6.0 asks for there and Debian
/// 13's toolchain lacks (see its README).
let fullyStatic: [LinkerSetting] = [
  .unsafeFlags(["-static-executable", "-L", "\(Context.packageDirectory)/Sources/CLinux/static"])
]
/// Their memory is mostly code, faulted in 64 KiB at a time around first
/// uses: lld puts the functions a program runs first, in the order a script
/// recorded (scripts/lock-screen-order for the terminal lock screen: 4.6 →
/// 3.0 MiB while locked; scripts/wayland-lock-screen-order for the Wayland
/// one; scripts/daemon-order for passlockd: idle 4.5 → 3.6 MiB in full
/// Swift, the rest mostly the standard library's one 1.6 MiB section, which
/// no order can split). The build does not track the file: a new one needs
/// a fresh link.
func symbolOrder(_ file: String) -> [LinkerSetting] {
  [
    .unsafeFlags([
      "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/\(file)",
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
}
let lockScreenOrder = symbolOrder("Sources/passlock/lock-screen.order")

/// The headers of cairo with its fontconfig and freetype parts, for the
/// system-library target CCairo: it takes no pkg-config, whose -l flags
/// would make the libraries load at start; passlock-wayland loads them
/// itself before it asks for the lock (DrawingLibrary).
let drawingHeaders: [SwiftSetting] = [
  .unsafeFlags(["/usr/include/cairo", "/usr/include/freetype2"].flatMap { ["-Xcc", "-I" + $0] })
]
/// passlock (the command line and the terminal lock screen), passlock-vt,
/// passlock-wayland and passlockd are built with Embedded Swift where the toolchain
/// can (`embeddedBuild`): no Swift runtime, no type metadata, the standard
/// library compiled in as far as it is used. Their memory while locked was
/// otherwise mostly the full runtime's code (passlock-wayland: 2.5 MiB of
/// 11, against swaylock's 8.3 in all; now 8.0; passlockd idle: 3.6 → 1.0
/// MiB), faulted in 64 KiB around
/// single functions of the standard library's one large section, which no
/// symbol order can gather. Each is one module, its own files and
/// Sources/Embedded (its `Shared` link): the Embeddable folders of the
/// modules it shares code with, whose files leave out their imports of each
/// other's modules there (`#if !PASSLOCK_ONE_MODULE`), and the stand-ins
/// for what the toolchain has for full Swift only (Sources/EmbeddedGlibc
/// with GlibcOverlay.swift for its Glibc module, CProgramArguments for
/// CommandLine). The rules are in Sources/Embedded/README.md.
/// passlock-vt runs setuid root: the shared files it compiles in get a
/// setuid program's review.
/// Optimized for size (passlock-wayland's code is resident whole: 253 KB,
/// 50 KB less than with -O), a section per function so that the symbol
/// order places each.
let embeddedLockScreen: [SwiftSetting] = [
  .enableExperimentalFeature("Embedded"), .unsafeFlags(["-wmo", "-Osize", "-Xfrontend", "-function-sections"]),
]
/// The toolchain's usr/lib/swift: two levels up from the swiftc on PATH
/// (Debian's /usr/bin/swiftc leads to /usr/libexec/swift).
let toolchainLibraries: String? = {
  for directory in (Context.environment["PATH"] ?? "").split(separator: ":") {
    guard let resolved = realpath(directory + "/swiftc", nil) else { continue }
    defer { free(resolved) }
    let bin = String(cString: resolved).split(separator: "/", omittingEmptySubsequences: false).dropLast()
    return bin.dropLast().joined(separator: "/") + "/lib/swift"
  }
  return nil
}()
/// The triple of the toolchain's embedded standard library for the machine
/// that builds (`uname -m`), whatever the toolchain's own triple spells its
/// vendor (Debian's compiler is x86_64-pc-linux-gnu, the library's directory
/// x86_64-unknown-linux-gnu): nil when it has none for this machine.
let embeddedTriple: String? = {
  var system = utsname()
  guard uname(&system) == 0, let libraries = toolchainLibraries, let directory = opendir(libraries + "/embedded") else {
    return nil
  }
  defer { closedir(directory) }
  let machine = withUnsafeBytes(of: system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
  while let entry = readdir(directory) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    if name.hasPrefix(machine + "-") && name.hasSuffix("-linux-gnu") { return name }
  }
  return nil
}()
/// Embedded Swift builds those four programs from 6.1 on (6.0's has no
/// String) where the toolchain has its embedded library for this
/// machine; elsewhere (Debian 13's swiftlang 6.0.3) they are built in full
/// Swift with the runtime linked in: the same programs, more memory.
/// PASSLOCK_FULL_SWIFT=1 asks for the full-Swift builds anywhere (to
/// measure them, to test them).
#if compiler(>=6.1)
  let embeddedBuild = embeddedTriple != nil && Context.environment["PASSLOCK_FULL_SWIFT"] == nil
#else
  let embeddedBuild = false
#endif
/// The modules whose Embeddable folders the Embedded build compiles in are
/// held to Embedded Swift's language restrictions in their own full-Swift
/// build (no untyped throws, weak or unowned references, casts to protocols,
/// generic methods on existentials): a break shows there first, in every
/// build. Swift 6.3 names the group; Debian 13's 6.0.3 does not.
#if compiler(>=6.3)
  let embeddable: [SwiftSetting] = [.unsafeFlags(["-Werror", "EmbeddedRestrictions"])]
#else
  let embeddable: [SwiftSetting] = []
#endif
/// The READMEs of Sources/Embedded and the folders it links, not sources.
let embeddedReadmes = [
  "", "PasslockCore/", "PasslockPOSIX/", "PasslockClient/", "PasslockLockController/", "PasslockBus/", "PasslockTimers/",
  "PasslockWaylandIdle/",
].map {
  "Shared/\($0)README.md"
}
/// How one program is built: its dependencies, excluded files and settings.
struct ProgramBuild {
  var dependencies: [Target.Dependency]
  var exclude: [String]
  var swift: [SwiftSetting] = []
  var linker: [LinkerSetting]
}
/// The standard library's Unicode tables (String comparison and hashing
/// normalize) are the one part of the toolchain the Embedded build links,
/// from the embedded directory next to the compiler's own libraries; it is
/// compiled for that directory's triple.
/// The lock screens are linked in their own order (`order`, recorded by
/// scripts/lock-screen-order and scripts/wayland-lock-screen-order).
func embeddedProgram(
  dependencies: [Target.Dependency], swift: [SwiftSetting] = [], order: String? = nil, linker: [String],
  otherwise fullSwift: ProgramBuild
) -> ProgramBuild {
  guard embeddedBuild, let libraries = toolchainLibraries, let triple = embeddedTriple else { return fullSwift }
  return ProgramBuild(
    dependencies: ["EmbeddedGlibc", "CProgramArguments"] + dependencies,
    exclude: (order.map { [String($0.split(separator: "/").last!)] } ?? []) + embeddedReadmes,
    swift: swift + embeddedLockScreen + [.define("PASSLOCK_ONE_MODULE"), .unsafeFlags(["-target", triple])],
    linker: [
      .unsafeFlags(["-target", triple, "-enable-experimental-feature", "Embedded", "-L", "\(libraries)/embedded/\(triple)"]),
      .linkedLibrary("swiftUnicodeDataTables"), .linkedLibrary("m"),
    ] + (order.map(symbolOrder) ?? []) + [.unsafeFlags(linker)])
}
/// The Wayland lock screen; a full-Swift build is one module too.
let waylandLockScreen: ProgramBuild = {
  let libraries: [Target.Dependency] = ["CLinux", "CWaylandClient", "CXKBCommon", "CCairo", "CSessionLock"]
  return embeddedProgram(
    dependencies: libraries, swift: drawingHeaders, order: "Sources/passlock-wayland/lock-screen.order",
    linker: ["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic"],
    otherwise: ProgramBuild(
      dependencies: libraries,
      exclude: ["lock-screen.order", "Shared/GlibcOverlay.swift", "Shared/ProgramArguments.swift"] + embeddedReadmes,
      swift: drawingHeaders + [.define("PASSLOCK_ONE_MODULE")],
      // Full RELRO (lld: gold gave none here).
      linker: [
        .unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "now", "-Xlinker", "--no-export-dynamic"])
      ]))
}()
/// The console holder, setuid root: a PIE with full RELRO (`-z relro -z now`,
/// asked for, not left to defaults) in either build, and in the Embedded one
/// no C++ runtime or unwinder at all; only the C library is loaded. Embedded
/// Swift has no runtime to link statically, and none that reads the
/// environment (the full one reads SWIFT_DEBUG_* and SWIFT_BACKTRACE).
/// Exclusivity is enforced at compile time only there (the full build
/// traps at run time too; Swift 6.3's EmbeddedDynamicExclusivity did not
/// trap in a test here).
let consoleHolder = embeddedProgram(
  dependencies: ["CLinux"],
  linker: [
    "-use-ld=lld", "-Xclang-linker", "-pie", "-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now",
    "-Xlinker", "-z", "-Xlinker", "separate-code", "-Xlinker", "--no-export-dynamic",
  ],
  otherwise: ProgramBuild(
    dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient", "CLinux"], exclude: ["Shared"], linker: staticRuntime))
/// The command line and the terminal lock screen: fully static in either
/// build. A full-Swift build imports the modules instead of Sources/Embedded.
let commandLine = embeddedProgram(
  dependencies: ["CLinux"], order: "Sources/passlock/lock-screen.order", linker: ["-Xclang-linker", "-static"],
  otherwise: ProgramBuild(
    dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient", "PasslockLockController"],
    exclude: ["lock-screen.order", "Shared"], linker: fullyStatic + lockScreenOrder))
/// The daemon: fully static in either build, linked in the order it runs
/// its functions (scripts/daemon-order). Its closures that the event loop
/// and the bus hold capture it strongly (Embedded Swift has no `unowned`):
/// the daemon lives as long as the process, and what lives shorter (a lock
/// screen's ready watch, the ScreenSaver answerer) ends its watches and
/// handlers when done.
let daemon = embeddedProgram(
  dependencies: ["CLinux"], order: "Sources/passlockd/daemon.order", linker: ["-Xclang-linker", "-static"],
  otherwise: ProgramBuild(
    dependencies: [
      "PasslockCore", "PasslockPOSIX", "PasslockClient", "PasslockBus", "PasslockTimers", "PasslockWaylandIdle", "CLinux",
    ],
    exclude: ["daemon.order", "Shared"], linker: fullyStatic + symbolOrder("Sources/passlockd/daemon.order")))

let package = Package(
  name: "passlock",
  products: [
    .executable(name: "passlock", targets: ["passlock"]),
    .executable(name: "passlock-auth", targets: ["passlock-auth"]),
    .executable(name: "passlockd", targets: ["passlockd"]),
    .executable(name: "passlock-vt", targets: ["passlock-vt"]),
    .executable(name: "passlock-wayland", targets: ["passlock-wayland"]),
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
    // The Wayland lock screen's C libraries (passlock-wayland alone uses them).
    .systemLibrary(name: "CWaylandClient", path: "Sources/CWaylandClient", pkgConfig: "wayland-client"),
    .systemLibrary(name: "CXKBCommon", path: "Sources/CXKBCommon", pkgConfig: "xkbcommon"),
    .systemLibrary(name: "CCairo", path: "Sources/CCairo"),
    // ext-session-lock-v1's client glue, generated by scripts/wayland-protocols.
    .target(name: "CSessionLock", path: "Sources/CSessionLock"),

    // Pure logic: policies, record formats, config parsing, protocol framing.
    // No C library, no I/O.
    .target(name: "PasslockCore", exclude: ["Embeddable/README.md"], swiftSettings: embeddable),
    // The syscall layer: file descriptors and errors, sockets (UnixSocket),
    // directories and small files, secure store files, termios, VT ioctls,
    // processes, clocks, the event loop. (Plain calls such as kill, access or
    // poll on one descriptor are still made where they are used.)
    .target(
      name: "PasslockPOSIX", dependencies: ["PasslockCore", "CLinux"], exclude: ["Embeddable/README.md"],
      swiftSettings: embeddable),
    // The password database (getpwuid_r): not for the static `passlock`.
    .target(name: "PasslockAccounts"),
    // The passcode store: yescrypt hashing and the on-disk records.
    .target(name: "PasslockStore", dependencies: ["PasslockCore", "PasslockPOSIX", "CXCrypt"]),
    // PAM: client transactions (account password) and the module side's calls.
    .target(name: "PasslockPAM", dependencies: ["PasslockCore", "PasslockPOSIX", "CPAM"]),
    // The system bus (D-Bus spoken directly) and sd_notify for passlockd.
    .target(
      name: "PasslockBus", dependencies: ["PasslockPOSIX", "CLinux"], exclude: ["Embeddable/README.md"], swiftSettings: embeddable),
    // A compositor's idle notification (ext-idle-notify-v1), the Wayland
    // wire spoken directly as PasslockBus speaks D-Bus: passlockd links no
    // Wayland library.
    .target(
      name: "PasslockWaylandIdle", dependencies: ["PasslockPOSIX"], exclude: ["Embeddable/README.md"], swiftSettings: embeddable),
    // What passlockd waits for on its event loop: idle timers, retries
    // (tested on a ManualClock).
    .target(
      name: "PasslockTimers", dependencies: ["PasslockCore", "PasslockPOSIX"], exclude: ["Embeddable/README.md"],
      swiftSettings: embeddable),
    // Talking to the other programs and their files: the gatekeeper's
    // pipes, the daemon's socket, the configuration, the status cache.
    .target(
      name: "PasslockClient", dependencies: ["PasslockCore", "PasslockPOSIX", "CLinux"], exclude: ["Embeddable/README.md"],
      swiftSettings: embeddable),
    // The passcode screen's controller both lock screens share (compiled into
    // each where they are built with Embedded Swift: Sources/Embedded).
    .target(
      name: "PasslockLockController", dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockClient"],
      exclude: ["Embeddable/README.md"], swiftSettings: embeddable),
    // pam_passlock.so: no Foundation, the Swift runtime linked in statically.
    .target(
      name: "PAMPasslock",
      dependencies: [
        "PasslockCore", "PasslockPOSIX", "PasslockStore", "PasslockPAM", "PasslockClient", "PasslockAccounts", "PasslockBus",
      ],
      exclude: ["exports.map"],
      linkerSettings: [
        .unsafeFlags([
          // Full RELRO, as any library loaded into a setuid host should have
          // (lld: gold gave none with Swift 6.0).
          "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "now",
          // The Swift runtime inside cannot be unloaded cleanly: its caches would
          // leak on every dlclose. NODELETE keeps one copy loaded across cycles.
          "-Xlinker", "-z", "-Xlinker", "nodelete",
          "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/PAMPasslock/exports.map",
        ])
      ]),

    .executableTarget(
      name: "passlock", dependencies: commandLine.dependencies, exclude: commandLine.exclude,
      swiftSettings: commandLine.swift, linkerSettings: commandLine.linker),
    .executableTarget(
      name: "passlock-vt", dependencies: consoleHolder.dependencies, exclude: consoleHolder.exclude,
      swiftSettings: consoleHolder.swift, linkerSettings: consoleHolder.linker),
    // The Wayland lock screen (`passlock lock --wayland`): a program of its
    // own, so the terminal lock screen stays static and light; see
    // `embeddedLockScreen` for how it is built. The C libraries are Debian's
    // shared ones (cairo loaded at the first frame: drawingHeaders). Linked in
    // its own lock screen's order (scripts/wayland-lock-screen-order). Not
    // position-independent, as `passlock`, the terminal's lock screen: no
    // relocations read and applied at start; its libraries, heap and stack
    // stay randomized.
    .systemLibrary(name: "EmbeddedGlibc", path: "Sources/EmbeddedGlibc"),
    // Its arguments, kept before main (Embedded Swift has no CommandLine).
    .target(name: "CProgramArguments", path: "Sources/CProgramArguments"),
    .executableTarget(
      name: "passlock-wayland", dependencies: waylandLockScreen.dependencies, exclude: waylandLockScreen.exclude,
      swiftSettings: waylandLockScreen.swift, linkerSettings: waylandLockScreen.linker),
    .executableTarget(
      name: "passlockd", dependencies: daemon.dependencies, exclude: daemon.exclude, swiftSettings: daemon.swift,
      linkerSettings: daemon.linker),
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
    .testTarget(name: "PasslockWaylandIdleTests", dependencies: ["PasslockWaylandIdle", "PasslockPOSIX"]),
    .testTarget(name: "PasslockTimersTests", dependencies: ["PasslockTimers", "PasslockCore", "PasslockPOSIX"]),
    .testTarget(
      name: "PasslockStoreTests",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore"]),
    // Runs the built executables; `swift build --build-tests` builds them
    // (depending on them here would pull their static-runtime flags into the test bundle).
    // PASSLOCK_EMBEDDED: the tests know whether passlock and passlock-wayland were built with Embedded Swift.
    .testTarget(
      name: "EndToEndTests", dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockBus"],
      swiftSettings: embeddedBuild ? [.define("PASSLOCK_EMBEDDED")] : []),
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
