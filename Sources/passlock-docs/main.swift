import Glibc
import PasslockCore

// passlock-docs: build-time generator (never installed). Prints a completion
// script, or a man page fragment from the tables the programs themselves use.
//   passlock-docs completion bash|zsh|fish
//   passlock-docs config-keys | commands | sample-config

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "completion":
  guard arguments.count == 2, let shell = ShellCompletions.Shell(rawValue: arguments[1]) else { fallthrough }
  print(ShellCompletions.script(for: shell), terminator: "")
case "config-keys" where arguments.count == 1: print(ManualReference.configKeys(), terminator: "")
case "commands" where arguments.count == 1: print(ManualReference.commands(), terminator: "")
case "sample-config" where arguments.count == 1: print(SampleConfig.text(), terminator: "")
default:
  print("Usage: passlock-docs completion bash|zsh|fish | config-keys | commands | sample-config")
  exit(64)
}
