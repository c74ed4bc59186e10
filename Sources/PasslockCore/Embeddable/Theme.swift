/// The look of the lock screen, from the `[Appearance]` section.
public struct Theme: Sendable, Equatable {
  public var titleColor: Int?
  public var dotColor: Int?
  public var errorColor: Int?
  public var keyColor: Int?
  public var statusColor: Int?
  public var filledGlyph: String?
  public var emptyGlyph: String?
  public var title: String?
  public var revealLastDigit: Bool

  public init(config: Config = Config()) {
    titleColor = Theme.sgr(config["Appearance.TitleColor"])
    dotColor = Theme.sgr(config["Appearance.DotColor"])
    errorColor = Theme.sgr(config["Appearance.ErrorColor"])
    keyColor = Theme.sgr(config["Appearance.KeyColor"])
    statusColor = Theme.sgr(config["Appearance.StatusColor"])
    filledGlyph = config["Appearance.FilledGlyph"].isEmpty ? nil : config["Appearance.FilledGlyph"]
    emptyGlyph = config["Appearance.EmptyGlyph"].isEmpty ? nil : config["Appearance.EmptyGlyph"]
    title = config["Appearance.Title"].isEmpty ? nil : config["Appearance.Title"]
    revealLastDigit = config.bool("Appearance.RevealLastDigit")
  }

  static func sgr(_ name: String) -> Int? {
    let base = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
    if let i = base.firstIndex(of: name) { return 30 + i }
    if name.hasPrefix("bright-"), let i = base.firstIndex(of: String(name.dropFirst(7))) { return 90 + i }
    return nil
  }
}
