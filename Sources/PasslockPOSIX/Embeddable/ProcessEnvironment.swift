import Glibc

/// This process's environment (environ(7)), as NAME=value strings: what a
/// child is given when one variable must differ.
public enum ProcessEnvironment {
  public static func current() -> [String] {
    var entries: [String] = []
    var pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
    while let entry = pointer.pointee {
      entries.append(String(cString: entry))
      pointer += 1
    }
    return entries
  }
}
