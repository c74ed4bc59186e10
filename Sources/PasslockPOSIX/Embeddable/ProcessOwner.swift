import Glibc

/// The real uid of process `pid` (the first field of `Uid:` in
/// /proc/PID/status; a setuid program's /proc entry is root's, its real
/// uid its caller's), or nil once it is gone.
public func realUID(ofProcess pid: pid_t) -> uid_t? {
  processStatus(pid)?.realUID
}

/// Whether `pid` runs as `uid`: its real uid is `uid` and it has not
/// exited (a zombie, dead but not yet reaped by its parent, still shows
/// its name and owner).
public func isRunning(_ pid: pid_t, as uid: uid_t) -> Bool {
  guard let status = processStatus(pid) else { return false }
  return status.realUID == uid && status.state != "Z" && status.state != "X"
}

/// /proc/PID/status's real uid and state letter.
private func processStatus(_ pid: pid_t) -> (realUID: uid_t?, state: Character?)? {
  guard let fd = try? FileDescriptor.open("/proc/\(pid)/status", O_RDONLY) else { return nil }
  defer { fd.close() }
  guard let bytes = try? fd.readAll(limit: 1 << 14) else { return nil }
  var status: (realUID: uid_t?, state: Character?) = (nil, nil)
  for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
    if status.realUID != nil && status.state != nil { break }  // the first of each (State: comes before Uid:)
    if line.hasPrefix("Uid:") {
      status.realUID = line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " }).first.flatMap { uid_t($0) }
    } else if line.hasPrefix("State:") {
      status.state = line.dropFirst(6).first { $0 != "\t" && $0 != " " }
    }
  }
  return status
}
