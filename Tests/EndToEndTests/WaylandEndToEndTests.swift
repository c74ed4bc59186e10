import Foundation
import Testing

/// The Wayland lock screen's build and its failures without a compositor.
/// On real compositors it is tested by Tests/Wayland/run (root, a container).
@Suite struct WaylandEndToEndTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

  /// The checked-in ext-session-lock-v1 glue is what scripts/wayland-protocols
  /// generates from Debian's wayland-protocols: the same code, comments and
  /// the system headers it includes aside (Debian 13's wayland-protocols words
  /// the documentation differently from Debian 12's, from which it was
  /// generated, and its wayland-scanner also includes <stdbool.h>).
  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/wayland-scanner")
        && FileManager.default.fileExists(atPath: "/usr/share/wayland-protocols/staging/ext-session-lock/ext-session-lock-v1.xml"),
      "needs wayland-scanner and wayland-protocols (scripts/install-deps)"))
  func theProtocolGlueIsWhatTheScriptGenerates() throws {
    let h = Harness()
    let out = h.root + "/glue"
    let run = h.run("/bin/bash", [Self.root.appendingPathComponent("scripts/wayland-protocols").path, out], input: Data())
    #expect(run.status == 0, "scripts/wayland-protocols: \(run.stderr)")
    for file in ["include/ext-session-lock-v1-client-protocol.h", "ext-session-lock-v1-protocol.c"] {
      let generated = try String(contentsOfFile: out + "/" + file, encoding: .utf8)
      let checkedIn = try String(contentsOf: Self.root.appendingPathComponent("Sources/CSessionLock/" + file), encoding: .utf8)
      #expect(
        Self.code(generated) == Self.code(checkedIn),
        "Sources/CSessionLock/\(file) differs from what scripts/wayland-protocols generates: run it")
    }
  }

  /// C text without its /* … */ comments, system includes and blank lines.
  static func code(_ text: String) -> [Substring] {
    var rest = Substring(text)
    var kept = ""
    while let open = rest.range(of: "/*") {
      kept += rest[..<open.lowerBound]
      guard let close = rest[open.upperBound...].range(of: "*/") else { return [Substring(text)] }
      rest = rest[close.upperBound...]
    }
    kept += rest
    return kept.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) && !$0.hasPrefix("#include <") }
  }

  /// Only passlock-wayland uses the Wayland, keymap and drawing libraries.
  /// It links libwayland-client and xkbcommon, and loads cairo (with
  /// fontconfig and freetype) itself before it asks for the lock (no cost to
  /// the loader's start-up: it runs while the gatekeeper answers); it draws its text with cairo's
  /// own calls, so it never names pango (with harfbuzz and glib, 6 MiB
  /// while locked).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"), "needs readelf (binutils)"))
  func onlyPasslockWaylandUsesTheWaylandLibraries() throws {
    let h = Harness()
    let libraries = ["libwayland-client", "libxkbcommon", "libcairo", "libfontconfig", "libpango", "libglib"]
    for name in ["passlock", "passlockd", "passlock-vt", "passlock-auth"] {
      let dynamic = h.run("/usr/bin/readelf", ["-d", Harness.binDirectory + "/" + name], input: Data()).stdout
      for library in libraries { #expect(!dynamic.contains(library), "\(name) links \(library)") }
    }
    let path = Harness.binDirectory + "/passlock-wayland"
    let dynamic = h.run("/usr/bin/readelf", ["-d", path], input: Data()).stdout
    #expect(dynamic.contains("[libwayland-client.so.0]") && dynamic.contains("[libxkbcommon.so.0]"))
    for library in ["libcairo", "libfontconfig", "libfreetype", "libpango", "libglib", "libharfbuzz"] {
      #expect(!dynamic.contains(library), "passlock-wayland loads \(library) at start")
    }
    #expect(!dynamic.contains("libswift"), "passlock-wayland loads the Swift runtime")
    let binary = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(binary.range(of: Data("libcairo.so.2".utf8)) != nil, "passlock-wayland does not name cairo to load")
    #expect(binary.range(of: Data("libpango".utf8)) == nil, "passlock-wayland names pango")
  }

  /// Where the toolchain builds Embedded Swift (Package.swift's
  /// `embeddedBuild`), passlock-wayland is built with it: none of the full
  /// Swift runtime (its metadata lookups and conformance scans were 2.5 MiB
  /// of its memory while locked). Elsewhere (Debian 13's Swift 6.0.3) it is
  /// the full-Swift build, runtime linked in. (That it draws without cairo's
  /// arcs and strokes is checked on sway, Tests/Wayland/run: their names are
  /// short string literals, kept inside the code, not as bytes a search could
  /// find.)
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nm"), "needs nm (binutils)"))
  func passlockWaylandCarriesTheRuntimeOnlyOutsideEmbeddedSwift() {
    let h = Harness()
    let path = Harness.binDirectory + "/passlock-wayland"
    let symbols = h.run("/usr/bin/nm", [path], input: Data()).stdout
    #expect(symbols.contains("passlock_wayland_main"), "nm did not read passlock-wayland")
    for runtime in ["swift_conformsToProtocol", "swift_getTypeByMangledName", "swift_getGenericMetadata"] {
      #if PASSLOCK_EMBEDDED
        #expect(!symbols.contains(runtime), "the Embedded passlock-wayland links the Swift runtime (\(runtime))")
      #else
        #expect(symbols.contains(runtime), "the full-Swift passlock-wayland has no Swift runtime (\(runtime))?")
      #endif
    }
  }

  /// No Wayland session, no compositor at the socket: 69, nothing locked,
  /// through `passlock lock --wayland` (an exec) as well.
  @Test func withoutACompositorItSaysSoWithStatus69() {
    let h = Harness()
    #expect(h.passlock("set", "--stdin", input: "2580\n2580\n").status == 0)
    let unset = h.passlock("lock", "--wayland")
    #expect(unset.status == 69)
    #expect(unset.stderr == "Error: WAYLAND_DISPLAY is not set: this is not a Wayland session; 'passlock lock' locks a terminal\n")
    h.environment["WAYLAND_DISPLAY"] = "wayland-none"
    h.environment["XDG_RUNTIME_DIR"] = h.root
    let absent = h.run(Harness.binDirectory + "/passlock-wayland", [], input: Data())
    #expect(absent.status == 69)
    #expect(
      absent.stderr.hasPrefix("Error: cannot connect to the Wayland compositor at \(h.root)/wayland-none: "), "\(absent.stderr)")
  }

  @Test func usageErrorsAndHelp() {
    let h = Harness()
    let help = h.run(Harness.binDirectory + "/passlock-wayland", ["--help"], input: Data())
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("OVERVIEW: Lock this Wayland session until the passcode is entered (ext-session-lock-v1).\n"))
    let bad = h.run(Harness.binDirectory + "/passlock-wayland", ["--ready-fd", "1"], input: Data())
    #expect(bad.status == 64)
    #expect(
      bad.stderr
        == "Error: The value '1' is invalid for '--ready-fd <fd>': expected a descriptor above 2\nUsage: passlock-wayland [--ready-fd <fd>] [--record <path>] [--grace-ms <ms>]\n  See 'passlock-wayland --help' for more information.\n"
    )
    #expect(h.passlock("lock", "--wayland", "--own-vt").status == 64)
    // Its arguments are kept before main (CProgramArguments: Embedded Swift
    // has no CommandLine): empty ones and spaces survive.
    let empty = h.run(Harness.binDirectory + "/passlock-wayland", ["--record", "", "two words"], input: Data())
    #expect(empty.status == 64)
    #expect(empty.stderr.hasPrefix("Error: Unexpected argument 'two words'\n"), "\(empty.stderr)")
  }
}
