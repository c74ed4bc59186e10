import Glibc

// What the toolchain's Glibc module adds to the C library in Swift, for this
// program's Embedded Swift build (Sources/EmbeddedGlibc is its C side): the
// same names and types, so the sources it shares with the full-Swift
// programs read the same in both. Only what those sources use.

public var errno: Int32 {
  get { __errno_location().pointee }
  set { __errno_location().pointee = newValue }
}

public func open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { passlock_open(path, flags, 0) }
public func open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
  passlock_open(path, flags, mode)
}
public func openat(_ directory: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
  passlock_openat(directory, path, flags, mode)
}
public func fcntl(_ fd: Int32, _ command: Int32) -> Int32 { passlock_fcntl(fd, command, 0) }
public func fcntl(_ fd: Int32, _ command: Int32, _ value: Int32) -> Int32 { passlock_fcntl(fd, command, value) }

// Macros of casts, which the C importer leaves out.
// swift-format-ignore: AlwaysUseLowerCamelCase
public var SIG_IGN: __sighandler_t { unsafeBitCast(1, to: __sighandler_t.self) }
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
