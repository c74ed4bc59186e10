import Glibc

/// stat(2)'s access time of `path` (wall-clock seconds): for a terminal,
/// when it was last read from (logind's idle signal too); nil if it is gone.
public func accessTime(ofPath path: String) -> Int64? {
  var st = stat()
  return stat(path, &st) == 0 ? Int64(st.st_atim.tv_sec) : nil
}
