extension String {
  /// Every occurrence of `target` replaced (no Foundation or regex runtime in the core).
  func replacingAll(_ target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var out = ""
    var rest = self[...]
    while !rest.isEmpty {
      if rest.starts(with: target) {
        out += replacement
        rest = rest.dropFirst(target.count)
      } else {
        out.append(rest.removeFirst())
      }
    }
    return out
  }
}
