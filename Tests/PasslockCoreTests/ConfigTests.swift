import PasslockCore
import Testing

@Suite struct ConfigTests {
  @Test func defaultsAndOverridesInLoadOrder() throws {
    var config = Config()
    #expect(config["Store.SystemDirectory"] == "/var/lib/passlock")
    try config.merge("[Store]\nSystemDirectory=/srv/a\n", file: "/etc/passlock/passlock.conf")
    try config.merge("# later files win\n[Store]\n  SystemDirectory = /srv/b  \n", file: "drop-in.conf")
    #expect(config["Store.SystemDirectory"] == "/srv/b")
    #expect(config.rendered() == """
      [Store]
      SystemDirectory=/srv/b

      [Authentication]
      PAMConfigDirectory=

      """)
  }

  static let errors: [(String, String)] = [
    ("[Nope]\n", "f.conf:1: unknown section [Nope]; known: Store, Authentication"),
    ("\n[Store]\nDirectory=/x\n", "f.conf:3: unknown key 'Directory' in [Store]; known: SystemDirectory"),
    ("SystemDirectory=/x\n", "f.conf:1: 'SystemDirectory=/x' comes before any [Section]"),
    ("[Store]\nSystemDirectory\n", "f.conf:2: expected Key=value, found 'SystemDirectory'"),
    ("[Store\n", "f.conf:1: a section header looks like [Name]"),
    ("[Store]\nSystemDirectory=relative/path\n", "f.conf:2: SystemDirectory=relative/path: expected an absolute path"),
  ]

  @Test(arguments: errors)
  func errorsNameFileAndLine(_ text: String, _ message: String) {
    var config = Config()
    #expect(throws: ConfigError.self) { try config.merge(text, file: "f.conf") }
    do {
      try config.merge(text, file: "f.conf")
    } catch {
      #expect(error.description == message)
    }
  }
}
