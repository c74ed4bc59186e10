import PasslockCore
import Testing

/// The Wayland lock screen's geometry: scales with the surface, keys where
/// clicks and taps find them.
@Suite struct SurfaceLayoutTests {
  @Test func everyKeyIsWhereAClickFindsIt() {
    let layout = SurfaceLayout(width: 1024, height: 768, passwordField: false, externalKey: true)
    #expect(layout.keys.count == 12)
    for key in layout.keys {
      #expect(layout.key(atX: key.centerX, y: key.centerY) == key.key)
      #expect(layout.key(atX: key.centerX + key.radius * 0.9, y: key.centerY) == key.key)
    }
    #expect(layout.key(atX: 2, y: 2) == nil)
    let one = layout.keys[0]
    #expect(layout.key(atX: one.centerX + one.radius * 0.75, y: one.centerY + one.radius * 0.75) == nil, "the corner outside the circle")
  }

  @Test func noExternalKeyUnlessOfferedAndNoKeypadInThePasswordField() {
    let plain = SurfaceLayout(width: 1024, height: 768, passwordField: false, externalKey: false)
    #expect(plain.keys.count == 11)
    #expect(!plain.keys.contains { $0.key == .external })
    #expect(SurfaceLayout(width: 1024, height: 768, passwordField: true, externalKey: true).keys.isEmpty)
  }

  /// Half the logical size at scale 2 is the same picture in device pixels.
  @Test func theLayoutScalesLinearly() {
    let big = SurfaceLayout(width: 1024, height: 768, passwordField: false, externalKey: true)
    let small = SurfaceLayout(width: 512, height: 384, passwordField: false, externalKey: true)
    #expect(abs(big.unit - 2 * small.unit) < 1e-9)
    for (a, b) in zip(big.keys, small.keys) {
      #expect(abs(a.centerX - 2 * b.centerX) < 1e-9 && abs(a.centerY - 2 * b.centerY) < 1e-9)
    }
    #expect(abs(big.title.rect.y - 2 * small.title.rect.y) < 1e-9)
  }

  /// Everything fits: the column lies inside the surface, top to bottom.
  @Test(arguments: [(1024.0, 768.0), (1920.0, 1080.0), (360.0, 640.0), (640.0, 360.0)])
  func theColumnFitsTheSurface(width: Double, height: Double) {
    let layout = SurfaceLayout(width: width, height: height, passwordField: false, externalKey: true)
    #expect(layout.title.rect.y >= 0)
    #expect(layout.status.rect.y + layout.status.rect.height <= height + 1e-9)
    for key in layout.keys { #expect(key.centerX - key.radius >= 0 && key.centerX + key.radius <= width) }
  }

  @Test func thePaletteFollowsTheThemesColours() {
    #expect(SurfacePalette.color(nil) == SurfacePalette.foreground)
    #expect(SurfacePalette.color(31) == SurfacePalette.RGB(0xef / 255.0, 0x29 / 255.0, 0x29 / 255.0))
    #expect(SurfacePalette.color(97) == SurfacePalette.RGB(1, 1, 1))
    #expect(SurfacePalette.color(30) != SurfacePalette.background, "black stays visible on the background")
  }
}
