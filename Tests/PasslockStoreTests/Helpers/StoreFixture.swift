import Glibc
import PasslockCore
import PasslockPOSIX
import PasslockStore

/// A throwaway store directory under /tmp, removed when the fixture goes.
final class StoreFixture {
  let root: String
  var directory: String { root + "/store" }
  var location: StoreLocation { StoreLocation(kind: .user, directory: directory, owner: getuid()) }

  init() {
    var template = Array("/tmp/passlock-store-test.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed") }
    root = String(cString: made)
  }

  deinit { _ = system("rm -rf '\(root)'") }

  /// A store at the lowest cost, so tests spend no time hashing.
  func store(create: Bool = true) throws -> PasscodeStore {
    guard let store = try PasscodeStore(location, create: create, hashCost: 1) else {
      throw StoreFileError.missing(directory)
    }
    return store
  }

  func write(_ name: String, _ text: String, mode: mode_t = 0o600) {
    let path = directory + "/" + name
    unlink(path)
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
    close(fd)
    chmod(path, mode)
  }

  func read(_ name: String) -> String? {
    guard let file = fopen(directory + "/" + name, "r") else { return nil }
    defer { fclose(file) }
    var out = [UInt8]()
    while true {
      let c = fgetc(file)
      if c == EOF { break }
      out.append(UInt8(c))
    }
    return String(decoding: out, as: UTF8.self)
  }
}

func secret(_ text: String) -> Secret {
  var s = Secret()
  for byte in text.utf8 { s.append(byte) }
  return s
}
