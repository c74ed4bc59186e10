import Foundation
import Testing

@testable import PasslockCore

/// The completion scripts and man page fragments are generated from the same
/// tables as the help text: every subcommand, flag and config key is in them.
struct DocumentationTests {
  @Test(arguments: ShellCompletions.Shell.allCases)
  func everySubcommandAndFlagCompletes(shell: ShellCompletions.Shell) {
    let script = ShellCompletions.script(for: shell)
    for sub in CLI.Subcommand.allCases {
      #expect(script.contains(sub.rawValue), "\(sub.rawValue) missing from the \(shell) script")
      for option in sub.options {
        let flag = shell == .fish ? "-l " + option.flag.dropFirst(2) : option.flag
        #expect(script.contains(flag), "\(option.flag) of \(sub.rawValue) missing from the \(shell) script")
      }
    }
  }

  @Test func theBashScriptCompletesSubcommandsAndFlags() {
    let script = ShellCompletions.script(for: .bash)
    #expect(script.contains("compgen -W \"lock set change remove verify status reset config help --help --version\""))
    #expect(script.contains("    verify)\n      COMPREPLY=($(compgen -W \"--stdin --help\" -- \"$cur\")) ;;\n"))
    #expect(script.contains("--tty|--ready-fd|--record|--leader|--grace-ms) COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac"))
  }

  @Test func everyConfigKeyIsInTheManualWithItsDefault() {
    let page = ManualReference.configKeys()
    for key in Config.schema {
      #expect(page.contains("*\(key.key)=*"), "\(key.name) missing")
    }
    #expect(
      page.contains(
        "## [Store]\n\n*SystemDirectory=*\n\n\tWhere the installed (setuid) passlock-auth keeps each user's passcode, one root-owned 0700 directory per user. Read from the root-owned file only. Accepted: an absolute path, or empty. Default: /var/lib/passlock.\n"
      ))
    #expect(page.contains("## [External]\n\nThe external authenticator, the Linux stand-in"), "a section's note comes before its keys")
  }

  @Test func everyOptionIsInTheManual() {
    let page = ManualReference.commands()
    for sub in CLI.Subcommand.allCases {
      for option in sub.options { #expect(page.contains("\t*\(option.flag)*"), "\(option.flag) missing") }
    }
  }

  @Test(arguments: [("a*b_c\\d", "a\\*b\\_c\\\\d"), ("plain", "plain")])
  func scdocMarkupIsEscaped(text: String, escaped: String) {
    #expect(ManualReference.escaped(text) == escaped)
  }
}

/// README's layout table names every directory of the tree (and nothing gone).
@Test func theREADMELayoutMatchesTheTree() throws {
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
  let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
  let table = readme.components(separatedBy: "## Layout\n").last?.components(separatedBy: "\n## ").first ?? ""
  let files = FileManager.default
  var expected = ["Sources", "Tests"].flatMap { top in
    ((try? files.contentsOfDirectory(atPath: root.appendingPathComponent(top).path)) ?? []).map { "\(top)/\($0)" }
  }
  expected += ["Fuzz", "bench", "config", "systemd", "scripts", "debian", "doc", ".ci/run"]
  for path in expected {
    #expect(table.contains("`\(path)`"), "README's layout table lacks \(path)")
  }
  for named in table.matches(of: /`((?:Sources|Tests)\/[A-Za-z-]+)`/).map({ String($0.1) }) {
    #expect(files.fileExists(atPath: root.appendingPathComponent(named).path), "README's layout names \(named), which is gone")
  }
}
