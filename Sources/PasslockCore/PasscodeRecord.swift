/// The persisted passcode: its digit count (the lock screen shows that many dots and
/// submits on the last digit) and its crypt(3) hash.
public struct PasscodeRecord: Equatable, Sendable {
  public var length: Int
  public var hash: String

  public init(length: Int, hash: String) {
    self.length = length
    self.hash = hash
  }

  static let header = "passlock-passcode 1"

  public func serialized() -> String {
    "\(Self.header)\nlength=\(length)\nhash=\(hash)\n"
  }

  public static func parse(_ text: String) throws(RecordFormatError) -> PasscodeRecord {
    let fields = try RecordFormat.fields(text, header: header, keys: ["length", "hash"])
    guard let length = Int(fields["length"]!), PasscodePolicy.lengths.contains(length) else {
      throw RecordFormatError(reason: "length is not between 4 and 16")
    }
    let hash = fields["hash"]!
    // yescrypt: "$y$" params "$" salt "$" hash; anything else was not written by us.
    guard hash.hasPrefix("$y$"), hash.split(separator: "$", omittingEmptySubsequences: false).count == 5
    else { throw RecordFormatError(reason: "hash is not a yescrypt hash") }
    return PasscodeRecord(length: length, hash: hash)
  }
}

/// A store file whose content is not what passlock writes.
public struct RecordFormatError: Error, Equatable {
  public var reason: String
  public init(reason: String) { self.reason = reason }
}

/// The shared shape of the store's files: a header line, then exactly the
/// expected `key=value` lines in order, each newline-terminated.
enum RecordFormat {
  static func fields(_ text: String, header: String, keys: [String]) throws(RecordFormatError) -> [String: String] {
    guard text.hasSuffix("\n") else { throw RecordFormatError(reason: "the file is truncated") }
    let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.first.map(String.init) == header else {
      throw RecordFormatError(reason: "the first line is not '\(header)'")
    }
    guard lines.count == keys.count + 1 else { throw RecordFormatError(reason: "expected \(keys.count + 1) lines") }
    var result: [String: String] = [:]
    for (key, line) in zip(keys, lines.dropFirst()) {
      guard line.hasPrefix(key + "=") else { throw RecordFormatError(reason: "expected '\(key)=' on its own line") }
      result[key] = String(line.dropFirst(key.count + 1))
    }
    return result
  }
}
