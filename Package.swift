// swift-tools-version:6.0
// Targets follow what they link (see ../shared/CONVENTIONS.md): one
// system-library target per C library, a pure core, a POSIX layer, and thin
// executables on top.
import PackageDescription

/// `passlock-auth` links the Swift runtime statically: it runs setuid and must
/// not depend on the toolchain's install path. It stays a dynamic executable
/// (PIE, so ASLR covers it) because PAM loads its modules with dlopen.
let staticRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]
/// `passlock` (the lock screen) is a fully static executable: no dynamic
/// loader, no libstdc++ mapped, about half the memory and start-up time. It
/// therefore avoids NSS (getpwuid): the gatekeeper reports the user name.
let fullyStatic: [LinkerSetting] = [.unsafeFlags(["-static-executable"])]

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
      linkerSettings: fullyStatic),
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
