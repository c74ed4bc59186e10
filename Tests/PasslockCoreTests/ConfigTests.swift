import PasslockCore
import Testing

/// passlock.conf: defaults, overrides in load order, and errors naming
/// file:line.
@Suite struct ConfigTests {
  @Test func defaultsAndOverridesInLoadOrder() throws {
    var config = Config()
    #expect(config["Store.SystemDirectory"] == "/var/lib/passlock")
    try config.merge("[Store]\nSystemDirectory=/srv/a\n", file: "/etc/passlock/passlock.conf")
    try config.merge("# later files win\n[Store]\n  SystemDirectory = /srv/b  \n", file: "drop-in.conf")
    #expect(config["Store.SystemDirectory"] == "/srv/b")
    try config.merge("[Appearance]\nRevealLastDigit=off\nLanguage=ja\n", file: "user.conf")
    #expect(!config.bool("Appearance.RevealLastDigit"))
    #expect(
      config.rendered() == """
        [Store]
        SystemDirectory=/srv/b

        [Authentication]
        PAMConfigDirectory=
        PasswordAfterBoot=no
        PasscodeOnlyWhileLocked=no
        PasswordEveryHours=0

        [Appearance]
        Language=ja
        RevealLastDigit=no
        Title=
        FilledGlyph=
        EmptyGlyph=
        TitleColor=default
        DotColor=cyan
        ErrorColor=red
        KeyColor=default
        StatusColor=default

        [External]
        Enabled=no
        Kind=fingerprint
        AutoStart=yes
        ArmDelaySec=2

        [Lock]
        OnStart=no
        UnlockOnLogindUnlock=no
        OverDesktop=no

        [Idle]
        LockAfterSec=0
        GraceSec=0

        [Console]
        Mode=auto

        [Wayland]
        Lock=in-session

        """)
  }

  static let errors: [(String, String)] = [
    ("[Nope]\n", "f.conf:1: unknown section [Nope]; known: Store, Authentication, Appearance, External, Lock, Idle, Console, Wayland"),
    ("\n[Store]\nDirectory=/x\n", "f.conf:3: unknown key 'Directory' in [Store]; known: SystemDirectory"),
    ("SystemDirectory=/x\n", "f.conf:1: 'SystemDirectory=/x' comes before any [Section]"),
    ("[Store]\nSystemDirectory\n", "f.conf:2: expected Key=value, found 'SystemDirectory'"),
    ("[Store\n", "f.conf:1: a section header looks like [Name]"),
    ("[Store]\nSystemDirectory=relative/path\n", "f.conf:2: SystemDirectory=relative/path: expected an absolute path"),
    ("[Appearance]\nRevealLastDigit=maybe\n", "f.conf:2: RevealLastDigit=maybe: expected yes or no"),
    ("[Appearance]\nLanguage=fr\n", "f.conf:2: Language=fr: expected one of: auto, en, ja"),
    ("[Appearance]\nFilledGlyph=**\n", "f.conf:2: FilledGlyph=**: expected one character one column wide"),
    (
      "[Appearance]\nDotColor=teal\n",
      "f.conf:2: DotColor=teal: expected one of: default, black, red, green, yellow, blue, magenta, cyan, white, bright-black, bright-red, bright-green, bright-yellow, bright-blue, bright-magenta, bright-cyan, bright-white"
    ),
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
