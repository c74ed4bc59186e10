import Foundation

/// A process's /proc/PID/stat fields from the state on (field 3 of
/// proc(5); index 0 here), read after the command name's closing
/// parenthesis, which may itself hold spaces. Empty once the process is gone.
func processStat(_ pid: pid_t) -> [Substring] {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let end = stat.range(of: ")", options: .backwards)
  else { return [] }
  return stat[end.upperBound...].split(separator: " ")
}
