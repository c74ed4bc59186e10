// libFuzzer target over the input parser and the lock state machine, built
// together with PasslockCore's sources by scripts/fuzz (-sanitize=fuzzer).
//
// The property: no input that lacks the passcode's digits, in order, reaches
// "unlocked"; and the controller's entry always has as many digits as the
// screen counts. Time advances with the input, so delays and shakes happen.

let passcode: [UInt8] = Array("2580".utf8)

/// Every digit the input could be typing, as ASCII, in order: the digit keys
/// themselves and the numeric keypad in application mode (ESC O p..y), which
/// a terminal sends for the keypad's 0..9.
func typedDigits(_ input: [UInt8]) -> [UInt8] {
  var digits: [UInt8] = []
  for (index, byte) in input.enumerated() {
    if (0x30...0x39).contains(byte) { digits.append(byte) }
    if byte == 0x1b && index + 2 < input.count && input[index + 1] == 0x4f && (0x70...0x79).contains(input[index + 2]) {
      digits.append(input[index + 2] - 0x70 + 0x30)
    }
  }
  return digits
}

@_cdecl("LLVMFuzzerTestOneInput")
public func lockScreenFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = Array(UnsafeBufferPointer(start: data, count: size))
  var parser = InputParser()
  var screen = LockScreen(flow: .unlock, length: passcode.count, now: 0)
  var entry: [UInt8] = []
  var failures = 0
  var now: Int64 = 0

  for byte in input {
    now += Int64(byte & 0x7f) * 7
    let key: InputParser.Key?
    if byte == 0xfe { key = parser.timeOut() } else { key = parser.feed(byte) }
    guard let key else { continue }
    var effects = screen.key(key, now: now)
    while !effects.isEmpty {
      let effect = effects.removeFirst()
      switch effect {
      case .append(let digit): entry.append(digit)
      case .deleteLast: if !entry.isEmpty { entry.removeLast() }
      case .clearEntry: entry.removeAll()
      case .bell, .finish, .startAccountPassword, .cancelAccountPassword: break
      case .submitAccountPassword:
        // The fuzzer never knows the account password.
        entry.removeAll()
        effects += screen.verdict(.passwordRejected("no"), now: now)
      case .submit:
        if entry == passcode {
          effects += screen.verdict(.accepted(next: nil, length: nil), now: now)
        } else {
          failures += 1
          let delay = AttemptPolicy.delaySeconds(afterFailures: failures)
          effects += screen.verdict(
            .wrong(failures: failures, retryAfterSeconds: delay, lockedOut: failures >= AttemptPolicy.lockoutFailures),
            now: now)
        }
      }
    }
    precondition(entry.count == screen.entered || screen.busy || screen.finished, "entry and screen disagree")
    precondition(!screen.finished || !screen.passwordMode, "the account password field never unlocks here")
  }

  if screen.finished {
    var next = 0
    for digit in typedDigits(input) where next < passcode.count && digit == passcode[next] { next += 1 }
    precondition(next == passcode.count, "unlocked without the passcode in the input")
  }
  // Draw the final state at a size taken from the input: no size or state may crash the renderer.
  let width = Int(input.first ?? 80) % 200 + 1
  let height = Int(input.last ?? 24) % 60 + 1
  let renderer = LockRenderer(theme: Theme(), texts: Texts(.japanese), capabilities: .init(linuxConsole: size % 2 == 0, color: true))
  let (grid, layout) = renderer.render(
    screen, .init(clock: "00:00", userAtHost: "fuzz@host", externalKey: "Key"), now: now, width: width, height: height)
  _ = grid.render(over: nil, color: true)
  _ = layout.key(atColumn: width / 2, row: height / 2)
  return 0
}
