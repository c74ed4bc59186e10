import CProgramArguments

/// Embedded Swift has no `CommandLine`: the arguments main was given, kept
/// by CProgramArguments before it, for `CommandLine.arguments` in main.swift.
public enum CommandLine {
  public static let arguments: [String] = (0..<Int(passlock_argument_count())).map { index in
    passlock_arguments()[index].map { String(cString: $0) } ?? ""
  }
}
