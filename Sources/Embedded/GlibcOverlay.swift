import Glibc

// What the toolchain's Glibc module adds to the C library in Swift, for this
// program's Embedded Swift build (Sources/EmbeddedGlibc is its C side): the
// same names and types, so the sources it shares with the full-Swift
// programs read the same in both. Only what those sources use.

public var errno: Int32 {
  get { __errno_location().pointee }
  set { __errno_location().pointee = newValue }
}

// Macros of casts, which the C importer leaves out.
// swift-format-ignore: AlwaysUseLowerCamelCase
public var SIG_IGN: __sighandler_t { unsafeBitCast(1, to: __sighandler_t.self) }
// swift-format-ignore: AlwaysUseLowerCamelCase
public var SIG_DFL: __sighandler_t? { nil }
// swift-format-ignore: AlwaysUseLowerCamelCase
public var MAP_FAILED: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: -1) }
public var environ: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>! { passlock_environ() }

// The file mode bits as `mode_t`, as the Glibc module declares them.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let S_IFMT = mode_t(Glibc.S_IFMT)
// swift-format-ignore: AlwaysUseLowerCamelCase
public let S_IFREG = mode_t(Glibc.S_IFREG)
// swift-format-ignore: AlwaysUseLowerCamelCase
public let S_IFDIR = mode_t(Glibc.S_IFDIR)
