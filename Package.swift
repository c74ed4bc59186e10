// swift-tools-version:6.0
// Targets follow what they link (see ../shared/CONVENTIONS.md): one
// system-library target per C library, a pure core, a POSIX layer, and thin
// executables on top.
import PackageDescription

/// Executables link the Swift runtime statically: `passlock-auth` runs setuid
/// and must not depend on the toolchain's install path, and the lock path keeps
/// its memory small without shared Swift libraries.
let staticRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]

let package = Package(
  name: "passlock",
  products: [
    .executable(name: "passlock", targets: ["passlock"]),
    .executable(name: "passlock-auth", targets: ["passlock-auth"]),
  ],
  targets: [
    .systemLibrary(name: "CPAM", path: "Sources/CPAM"),
    .systemLibrary(name: "CXCrypt", path: "Sources/CXCrypt"),

    // Pure logic: policies, record formats, config parsing, protocol framing.
    // No C library, no I/O.
    .target(name: "PasslockCore"),
    // File descriptors, errno, termios, processes: the only layer that makes syscalls.
    .target(name: "PasslockPOSIX", dependencies: ["PasslockCore"]),
    // The passcode store: yescrypt hashing and the on-disk records.
    .target(name: "PasslockStore", dependencies: ["PasslockCore", "PasslockPOSIX", "CXCrypt"]),
    // PAM client transactions (account password).
    .target(name: "PasslockPAM", dependencies: ["PasslockPOSIX", "CPAM"]),

    .executableTarget(
      name: "passlock",
      dependencies: ["PasslockCore", "PasslockPOSIX"],
      linkerSettings: staticRuntime),
    .executableTarget(
      name: "passlock-auth",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore", "PasslockPAM"],
      linkerSettings: staticRuntime),

    .testTarget(name: "PasslockCoreTests", dependencies: ["PasslockCore"]),
    .testTarget(
      name: "PasslockStoreTests",
      dependencies: ["PasslockCore", "PasslockPOSIX", "PasslockStore"]),
    // Runs the built executables; `swift build --build-tests` builds them
    // (depending on them here would pull their static-runtime flags into the test bundle).
    .testTarget(name: "EndToEndTests", dependencies: ["PasslockCore"]),
  ],
  swiftLanguageModes: [.v6]
)
