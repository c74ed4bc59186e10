import Glibc

/// The real uid of process `pid` (the first field of `Uid:` in
/// /proc/PID/status; a setuid program's /proc entry is root's, its real
/// uid its caller's), or nil once it is gone.
public func realUID(ofProcess pid: pid_t) -> uid_t? {
  guard let fd = try? FileDescriptor.open("/proc/\(pid)/status", O_RDONLY) else { return nil }
  defer { fd.close() }
  guard let bytes = try? fd.readAll(limit: 1 << 14) else { return nil }
  for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Uid:") {
    return line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " }).first.flatMap { uid_t($0) }
  }
  return nil
}
