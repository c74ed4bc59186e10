/// Every word the lock screen shows, in English and Japanese.
public struct Texts: Sendable, Equatable {
  public enum Language: String, Sendable, CaseIterable {
    case english = "en"
    case japanese = "ja"

    /// From a POSIX locale name (LC_ALL, LC_MESSAGES, LANG): ja_JP.UTF-8 → Japanese.
    public static func from(locale: String?) -> Language {
      guard let locale, locale.hasPrefix("ja") else { return .english }
      return .japanese
    }
  }

  public var language: Language

  public init(_ language: Language) { self.language = language }

  var ja: Bool { language == .japanese }

  public func title(_ flow: LockScreen.Flow, _ step: LockScreen.Step) -> String {
    switch (flow, step) {
    case (_, .confirm): return ja ? "パスコードを確認" : "Confirm Passcode"
    case (.unlock, _): return ja ? "パスコードを入力" : "Enter Passcode"
    case (.create, _): return ja ? "パスコードを設定" : "Set Passcode"
    case (.change, _): return ja ? "パスコードを変更" : "Change Passcode"
    case (.remove, _): return ja ? "パスコードを削除" : "Remove Passcode"
    }
  }

  public func prompt(_ flow: LockScreen.Flow, _ step: LockScreen.Step) -> String {
    switch (flow, step) {
    case (.unlock, _): return ja ? "ロックを解除するにはパスコードを入力してください" : "Enter your passcode to unlock"
    case (_, .new): return ja ? "新しいパスコード（4〜16桁）を入力して Enter" : "Type a new passcode (4-16 digits), then Enter"
    case (_, .confirm): return ja ? "もう一度入力してください" : "Type it again to confirm"
    case (_, .current): return ja ? "現在のパスコードを入力してください" : "Enter your current passcode"
    }
  }

  public func notice(_ notice: LockScreen.Notice) -> String {
    switch notice {
    case .wrongPasscode: return ja ? "パスコードが違います" : "Passcode didn't match"
    case .mismatch: return ja ? "パスコードが一致しません。もう一度どうぞ" : "Passcodes didn't match. Try again."
    case .refused(let reason): return reason
    case .accountPasswordRequired:
      return ja ? "試行回数が多すぎます。アカウントのパスワードが必要です" : "Too many attempts: the account password is required"
    case .passwordFirst(.afterRestart):
      return ja ? "再起動後は一度アカウントのパスワードを入力してください" : "Enter your password once after a restart"
    case .passwordFirst(.afterHours(let hours)):
      return ja
        ? "\(hours)時間ごとに一度アカウントのパスワードが必要です" : "Enter your password: the passcode needs it every \(hours) hours"
    case .accountPasswordRejected(let message):
      return (ja ? "パスワードが違います" : "Password not accepted") + (message.isEmpty ? "" : " (\(message))")
    case .storeBusy: return storeBusy
    case .checking(let why):
      guard !why.isEmpty else { return checking }
      return ja ? "確認できません（\(why)）。再試行します…" : "Can't check now (\(why)); trying again…"
    case .noPasscode:
      return ja ? "パスコードが設定されていません。アカウントのパスワードを入力してください" : "No passcode is set: enter your account password"
    case .cannotRecord(let reason):
      switch reason {
      case .full:
        return ja
          ? "ディスクがいっぱいで試行を記録できません。アカウントのパスワードを使ってください" : "Can't record attempts: the disk is full. Use your account password."
      case .readOnly:
        return ja
          ? "読み取り専用のため試行を記録できません。アカウントのパスワードを使ってください"
          : "Can't record attempts: the store is read-only. Use your account password."
      }
    }
  }

  public var storeBusy: String { ja ? "パスコードの保存先が使用中です。もう一度どうぞ" : "Passcode store busy. Try again." }

  public var externalNotRecognized: String { ja ? "認識できませんでした。もう一度どうぞ" : "Not recognized. Try again." }

  public var accountPasswordTitle: String { ja ? "アカウントのパスワード" : "Account Password" }

  public func passwordPrompt(user: String) -> String {
    ja ? "\(user) のパスワードを入力して Enter" : "Type the password of \(user), then Enter"
  }

  /// The status line's hint for the key that opens or closes the password field.
  public func passwordKeyHint(open: Bool) -> String {
    if open { return ja ? "Esc: パスコード" : "Esc: passcode" }
    return ja ? "Tab: パスワード" : "Tab: password"
  }

  public func failedAttempts(_ count: Int) -> String {
    if ja { return "失敗 \(count) 回" }
    return count == 1 ? "1 failed attempt" : "\(count) failed attempts"
  }

  public func tryAgain(in seconds: Int64) -> String {
    ja ? "\(TimeText.clock(seconds)) 後に再試行" : "Try again in \(TimeText.clock(seconds))"
  }

  public var tooManyAttempts: String { ja ? "試行回数が多すぎます" : "Too many failed attempts" }

  public var checking: String { ja ? "確認中…" : "Checking…" }

  /// A passcode check that got no answer (the gatekeeper killed, stopped or
  /// not started): nothing unlocked; it may have been counted.
  public var checkFailed: String {
    ja ? "パスコードを確認できませんでした。もう一度どうぞ" : "The passcode could not be checked. Try again."
  }

  /// Under the account password field while Caps Lock is on (the Wayland lock
  /// screen knows it from the keymap; a terminal cannot).
  public var capsLock: String { ja ? "Caps Lock がオンです" : "Caps Lock is on" }
}
