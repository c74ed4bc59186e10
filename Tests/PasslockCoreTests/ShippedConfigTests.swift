import Foundation
import PasslockCore
import Testing

/// config/passlock.conf documents every key, commented out at its default.
@Test func theShippedConfigListsEveryKeyAtItsDefault() throws {
  let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/passlock.conf").path
  let text = try String(contentsOfFile: path, encoding: .utf8)
  #expect(
    text == SampleConfig.text(),
    "config/passlock.conf is made from Config.schema: swift run passlock-docs sample-config > config/passlock.conf")
  // Uncommented, it must parse and change nothing.
  let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
    line.hasPrefix("#") && line.dropFirst().contains("=") && !line.hasPrefix("# ") ? String(line.dropFirst()) : String(line)
  }.joined(separator: "\n")
  var config = Config()
  try config.merge(uncommented, file: path)
  #expect(config == Config())
  for key in Config.schema {
    #expect(text.contains("[\(key.section)]"), "section \(key.section)")
    #expect(text.contains("\n#\(key.key)=\(key.defaultValue)\n"), "key \(key.name)")
  }
}
