import Glibc
import Testing

@testable import PasslockPOSIX

/// Starting children: each descriptor reaches its own number in the child,
/// whatever order the mapping takes.
@Suite struct ChildProcessTests {
  /// passlock-vt maps a pipe made later onto fd 3 and one made earlier
  /// onto fd 4, and the earlier one may have number 3 in the parent: the
  /// dup2 onto 3 must not overwrite it before it is mapped to 4. Here the
  /// same collision, on whatever numbers the test process has free.
  @Test func aParentDescriptorThatAnEarlierMappingTakesStillReachesItsOwnNumber() throws {
    let first = try closeOnExecPipe()
    let second = try closeOnExecPipe()
    let taken = first.write  // second's target, and first's own number
    let pid = try ChildProcess.launch(
      "/bin/bash", arguments: ["bash", "-c", "echo \(taken) >&\(taken); echo \(taken + 1) >&\(taken + 1)"],
      descriptors: [(parent: second.write, child: taken), (parent: first.write, child: taken + 1)])
    close(first.write)
    close(second.write)
    #expect(waitStatus(of: pid) == 0)
    func line(_ fd: Int32) -> String {
      defer { close(fd) }
      var buffer = [UInt8](repeating: 0, count: 16)
      let n = read(fd, &buffer, buffer.count)
      return String(decoding: buffer[..<max(0, n)], as: UTF8.self)
    }
    #expect(line(second.read) == "\(taken)\n")
    #expect(line(first.read) == "\(taken + 1)\n")
  }
}
