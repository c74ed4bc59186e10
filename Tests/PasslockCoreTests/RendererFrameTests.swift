import PasslockCore
import Testing

extension RendererSnapshotTests {
  typealias R = RendererSnapshotTests
  static let console = LockRenderer(
    theme: Theme(), texts: Texts(.japanese), capabilities: .init(linuxConsole: true, color: true))
  static let japanese = LockRenderer(
    theme: Theme(), texts: Texts(.japanese), capabilities: .init(linuxConsole: false, color: true))

  static func wrong() -> LockScreen {
    var screen = R.typed([1, 1, 1, 1, 1, 1], into: R.unlock())
    _ = screen.verdict(.wrong(failures: 1, retryAfterSeconds: 0, lockedOut: false), now: 0)
    return screen
  }

  static func lockedOut() -> LockScreen {
    var screen = LockScreen(flow: .unlock, length: 6, failedAttempts: 10, lockedOut: true, now: 0)
    _ = screen.start()
    return screen
  }

  static func typingPassword() -> LockScreen {
    var screen = R.unlock()
    _ = screen.key(.alternate, now: 0)
    screen.passwordPrompt = "Password:"
    for byte in Array("hunter".utf8) { _ = screen.key(.text(byte), now: 0) }
    return screen
  }

  static func japaneseWrong() -> LockScreen {
    var screen = R.typed([1, 1, 1, 1], into: R.unlock(length: 4))
    _ = screen.verdict(.wrong(failures: 5, retryAfterSeconds: 60, lockedOut: false), now: 0)
    return screen
  }

  /// The first frame at 80×24: title, prompt, six empty dots, the keypad, the status line with the password key.
  @Test func initialFrame() {
    #expect(
      R.frame(R.unlock()) == """


                                         Enter Passcode
                                 Enter your passcode to unlock

                                        ○  ○  ○  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                               09:41  alice@studio  Tab: password
        """
    )
  }

  /// Three of six digits, after the last one was masked.
  @Test func threeOfSixDigits() {
    #expect(
      R.frame(R.typed([2, 5, 8], into: R.unlock()), now: 600) == """


                                         Enter Passcode
                                 Enter your passcode to unlock

                                        ●  ●  ●  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                               09:41  alice@studio  Tab: password
        """
    )
  }

  /// The last digit shows for half a second before it is masked.
  @Test func lastDigitVisible() {
    #expect(
      R.frame(R.typed([2, 5, 8], into: R.unlock()), now: 100) == """


                                         Enter Passcode
                                 Enter your passcode to unlock

                                        ●  ●  8  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                               09:41  alice@studio  Tab: password
        """
    )
  }

  /// A wrong passcode: message, the full dots row shifted by the shake.
  @Test func wrongPasscodeShakes() {
    #expect(
      R.frame(Self.wrong(), now: 10) == """


                                         Enter Passcode
                                     Passcode didn't match

                                           ●  ●  ●  ●  ●  ●

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                      09:41  alice@studio  1 failed attempt  Tab: password
        """
    )
  }

  /// After the shake the dots are cleared; the message and the count stay.
  @Test func wrongPasscodeAfterTheShake() {
    #expect(
      R.frame(Self.wrong(), now: 400) == """


                                         Enter Passcode
                                     Passcode didn't match

                                        ○  ○  ○  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                      09:41  alice@studio  1 failed attempt  Tab: password
        """
    )
  }

  /// During a delay: the countdown in the status line.
  @Test func delayCountdown() {
    #expect(
      R.frame(LockScreen(flow: .unlock, length: 6, failedAttempts: 6, retryAfterSeconds: 299, now: 0)) == """


                                         Enter Passcode
                                    Too many failed attempts

                                        ○  ○  ○  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




            09:41  alice@studio  6 failed attempts  Try again in 4:59  Tab: password
        """
    )
  }

  /// After the tenth failure: only the account password field, no way back to the keypad.
  @Test func accountPasswordRequired() {
    #expect(
      R.frame(Self.lockedOut()) == """








                                        Account Password
                      Too many attempts: the account password is required

                                    ________________________











                            09:41  alice@studio  10 failed attempts
        """
    )
  }

  /// The account password field (Tab): PAM's prompt, one mask per character, PAM's message.
  @Test func accountPasswordField() {
    #expect(
      R.frame(Self.typingPassword(), context: .init(clock: "09:41", userAtHost: "alice@studio", pamMessage: "2 failures since last login"))
        == """








                                        Account Password
                             Type the password of alice, then Enter

                               Password: ●●●●●●__________________

                                  2 failures since last login









                               09:41  alice@studio  Esc: passcode
        """
    )
  }

  /// The external authenticator's key and a PAM module's message.
  @Test func externalKeyShownWithItsMessage() {
    #expect(
      R.frame(
        R.unlock(),
        context: .init(clock: "09:41", userAtHost: "alice@studio", externalKey: "Touch", pamMessage: "Place your finger on the reader"))
          == """


                                           Enter Passcode
                                   Enter your passcode to unlock

                                          ○  ○  ○  ○  ○  ○

                                     ╭─────╮  ╭─────╮  ╭─────╮
                                     │  1  │  │  2  │  │  3  │
                                     ╰─────╯  ╰─────╯  ╰─────╯
                                     ╭─────╮  ╭─────╮  ╭─────╮
                                     │  4  │  │  5  │  │  6  │
                                     ╰─────╯  ╰─────╯  ╰─────╯
                                     ╭─────╮  ╭─────╮  ╭─────╮
                                     │  7  │  │  8  │  │  9  │
                                     ╰─────╯  ╰─────╯  ╰─────╯
                                     ╭─────╮  ╭─────╮  ╭─────╮
                                     │Touch│  │  0  │  │  ⌫  │
                                     ╰─────╯  ╰─────╯  ╰─────╯

                                  Place your finger on the reader


                                 09:41  alice@studio  Tab: password
          """
    )
  }

  /// 40×12: the one-line keypad.
  @Test func compactAt40x12() {
    #expect(
      R.frame(R.typed([2, 5], into: R.unlock(length: 4)), now: 600, width: 40, height: 12) == """
                     Enter Passcode
             Enter your passcode to unlock

                       ●  ●  ○  ○

                     1     2     3
                     4     5     6
                     7     8     9
                           0     ⌫


           09:41  alice@studio  Tab: password
        """
    )
  }

  /// Below 30×12: title, dots and status only.
  @Test func minimalOnATinyTerminal() {
    #expect(
      R.frame(R.typed([2, 5], into: R.unlock(length: 4)), now: 600, width: 24, height: 6) == """

             Enter Passcode

               ●  ●  ○  ○

          09:41  Tab: password
        """
    )
  }

  /// TERM=linux: CP437 glyphs only, and English even when Japanese is configured (no kana in the console font).
  @Test func linuxConsoleGlyphs() {
    #expect(
      R.frame(R.typed([2, 5], into: R.unlock(length: 4)), renderer: Self.console, now: 600) == """


                                         Enter Passcode
                                 Enter your passcode to unlock

                                           •  •  ○  ○

                                   ┌─────┐  ┌─────┐  ┌─────┐
                                   │  1  │  │  2  │  │  3  │
                                   └─────┘  └─────┘  └─────┘
                                   ┌─────┐  ┌─────┐  ┌─────┐
                                   │  4  │  │  5  │  │  6  │
                                   └─────┘  └─────┘  └─────┘
                                   ┌─────┐  ┌─────┐  ┌─────┐
                                   │  7  │  │  8  │  │  9  │
                                   └─────┘  └─────┘  └─────┘
                                            ┌─────┐  ┌─────┐
                                            │  0  │  │  ←  │
                                            └─────┘  └─────┘




                               09:41  alice@studio  Tab: password
        """
    )
  }

  /// Japanese texts, double-width characters centred by their columns.
  @Test func japanese() {
    #expect(
      R.frame(Self.japaneseWrong(), renderer: Self.japanese, now: 400) == """


                                        パスコードを入力
                                      パスコードが違います

                                           ○  ○  ○  ○

                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  1  │  │  2  │  │  3  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  4  │  │  5  │  │  6  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                   ╭─────╮  ╭─────╮  ╭─────╮
                                   │  7  │  │  8  │  │  9  │
                                   ╰─────╯  ╰─────╯  ╰─────╯
                                            ╭─────╮  ╭─────╮
                                            │  0  │  │  ⌫  │
                                            ╰─────╯  ╰─────╯




                09:41  alice@studio  失敗 5 回  1:00 後に再試行  Tab: パスワード
        """
    )
  }
}
