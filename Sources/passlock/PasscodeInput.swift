import Glibc
// The Embedded build compiles these modules' shared files into this one (Sources/Embedded).
#if !PASSLOCK_ONE_MODULE
  import PasslockPOSIX
#endif

/// Where typed secrets come from: standard input, one per line (`--stdin`),
/// or the controlling terminal with echo off (one `*` per passcode digit).
final class PasscodeInput {
  private let fromStandardInput: Bool
  private var terminal: FileDescriptor?

  init(standardInput: Bool) {
    fromStandardInput = standardInput
  }

  deinit { terminal?.close() }

  var isInteractive: Bool { !fromStandardInput }

  /// Reads one secret after showing `prompt`. Returns false at end of input.
  /// `digitsOnly` ignores other keys (passcodes); otherwise any printable byte counts.
  func read(prompt: String, into secret: inout Secret, digitsOnly: Bool) throws(InputError) -> Bool {
    secret.clear()
    return fromStandardInput ? try readLine(into: &secret) : try readTerminal(prompt, into: &secret, digitsOnly)
  }

  /// Asks a yes/no question on the terminal; nil without one. Enter means yes.
  func askYesNo(_ question: String) -> Bool? {
    guard isInteractive, let tty = try? openTerminal() else { return nil }
    try? tty.writeAll(question)
    var answer: [UInt8] = []
    var byte: UInt8 = 0
    while answer.count < 16 {
      let n = withUnsafeMutableBytes(of: &byte) { Glibc.read(tty.rawValue, $0.baseAddress, 1) }
      if n <= 0 || byte == 0x0a { break }
      answer.append(byte)
    }
    let word = String(decoding: answer, as: UTF8.self).lowercased().filter { !$0.isWhitespace }
    return word.isEmpty || word.hasPrefix("y")
  }

  /// Tells the user something on the terminal (or stderr with `--stdin`).
  func say(_ text: String) {
    if let terminal { try? terminal.writeAll(text) } else { printError(text) }
  }

  private func readLine(into secret: inout Secret) throws(InputError) -> Bool {
    var byte: UInt8 = 0
    var sawAny = false
    while true {
      let n: Int
      do {
        n = try withUnsafeMutableBytes(of: &byte) { buffer in
          Result { () throws(SystemError) in try FileDescriptor.standardInput.read(into: buffer) }
        }.get()
      } catch { throw .io(error) }
      if n == 0 { return sawAny }
      sawAny = true
      if byte == 0x0a { return true }
      if byte == 0x0d { continue }
      guard secret.append(byte) else { throw .tooLong }
    }
  }

  private func openTerminal() throws(InputError) -> FileDescriptor {
    if let terminal { return terminal }
    do {
      let fd = try FileDescriptor.open("/dev/tty", O_RDWR | O_NOCTTY)
      terminal = fd
      return fd
    } catch { throw .noTerminal }
  }

  private func readTerminal(_ prompt: String, into secret: inout Secret, _ digitsOnly: Bool) throws(InputError) -> Bool {
    let tty = try openTerminal()
    let mode: TerminalMode
    do { mode = try TerminalMode(rawInput: tty) } catch { throw .noTerminal }
    defer {
      mode.restore()
      try? tty.writeAll("\n")
    }
    try? tty.writeAll(prompt)
    var byte: UInt8 = 0
    while true {
      let n: Int
      do {
        n = try withUnsafeMutableBytes(of: &byte) { buffer in
          Result { () throws(SystemError) in try tty.read(into: buffer) }
        }.get()
      } catch { throw .io(error) }
      switch byte {
      case _ where n == 0: return false
      case 0x0d, 0x0a: return true
      case 0x03: throw .interrupted  // Ctrl-C: the terminal is restored by defer
      case 0x04 where secret.isEmpty: return false  // Ctrl-D on an empty line
      case 0x7f, 0x08:
        if !secret.isEmpty {
          secret.removeLast()
          try? tty.writeAll("\u{8} \u{8}")
        }
      case 0x15:  // Ctrl-U clears the line
        try? tty.writeAll(String(repeating: "\u{8} \u{8}", count: secret.count))
        secret.clear()
      case 0x30...0x39:
        if secret.append(byte) { try? tty.writeAll("*") }
      case 0x20...0x7e where !digitsOnly, 0x80...0xff where !digitsOnly:
        secret.append(byte)  // account passwords echo nothing, as passwd does
      default:
        break  // other control keys and escape bytes are not part of a secret
      }
    }
  }
}

enum InputError: Error, CustomStringConvertible {
  case noTerminal
  case interrupted
  case tooLong
  case io(SystemError)

  var description: String {
    switch self {
    case .noTerminal: return "there is no terminal to read the passcode from; pass --stdin to read it from standard input"
    case .interrupted: return "interrupted"
    case .tooLong: return "the input line is too long"
    case .io(let error): return "reading the passcode: \(error)"
    }
  }
}
