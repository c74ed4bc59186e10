/// The Wayland wire format, as far as an idle watch needs it: messages of
/// 32-bit words in the host's byte order, a header of the object id and
/// (size << 16 | opcode), then the arguments (uint, object and new_id as one
/// word; a string as its length with the NUL, its bytes, the NUL, padded to
/// a word). No file descriptors: nothing an idle watch binds sends any.
/// (wayland-util's `wl_closure_marshal` and `wl_connection_demarshal`.)
public enum WaylandWire {
  /// One message either way.
  public struct Message: Equatable, Sendable {
    public var object: UInt32
    public var opcode: UInt16
    /// The arguments' bytes, after the header.
    public var arguments: [UInt8]

    public init(object: UInt32, opcode: UInt16, arguments: [UInt8] = []) {
      self.object = object
      self.opcode = opcode
      self.arguments = arguments
    }

    /// Header and arguments, ready to send.
    public var bytes: [UInt8] {
      var out: [UInt8] = []
      Argument.append(word: object, to: &out)
      Argument.append(word: UInt32(8 + arguments.count) << 16 | UInt32(opcode), to: &out)
      return out + arguments
    }
  }

  /// A request's arguments in order.
  public enum Argument: Sendable {
    case uint(UInt32)
    case string(String)

    public static func encode(_ arguments: [Argument]) -> [UInt8] {
      var out: [UInt8] = []
      for argument in arguments {
        switch argument {
        case .uint(let value): append(word: value, to: &out)
        case .string(let text):
          let bytes = Array(text.utf8) + [0]
          append(word: UInt32(bytes.count), to: &out)
          out += bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
        }
      }
      return out
    }

    static func append(word: UInt32, to out: inout [UInt8]) {
      withUnsafeBytes(of: word) { out += $0 }
    }
  }

  /// The compositor broke the format (a size below the header, not a
  /// multiple of a word, above the limit; an argument past its message).
  public struct MalformedMessage: Error, Equatable, Sendable {
    public var why: String
  }

  /// The largest message taken: libwayland's own limit (WL_MAX_MESSAGE_SIZE).
  public static let maximumMessageSize = 4096

  /// Cuts a byte stream into messages; a message split across reads waits
  /// for its rest.
  public struct Framer: Sendable {
    private var pending: [UInt8] = []
    /// Where the next message starts in `pending` (what came before is
    /// dropped at the next append, not once per message).
    private var start = 0

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) {
      pending.removeFirst(start)
      start = 0
      pending += bytes
    }

    /// The next whole message, or nil until more bytes come.
    public mutating func next() throws(MalformedMessage) -> Message? {
      guard pending.count - start >= 8 else { return nil }
      var header = ArgumentReader(Array(pending[start..<start + 8]))
      let object = try header.uint()
      let sizeAndOpcode = try header.uint()
      let size = Int(sizeAndOpcode >> 16)
      guard size >= 8, size % 4 == 0, size <= maximumMessageSize else {
        throw MalformedMessage(why: "a message of \(size) bytes")
      }
      guard pending.count - start >= size else { return nil }
      let message = Message(
        object: object, opcode: UInt16(sizeAndOpcode & 0xffff), arguments: Array(pending[(start + 8)..<(start + size)]))
      start += size
      return message
    }
  }

  /// Reads an event's arguments in order.
  public struct ArgumentReader {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func uint() throws(MalformedMessage) -> UInt32 {
      guard offset + 4 <= bytes.count else { throw MalformedMessage(why: "an argument past its message") }
      var word: UInt32 = 0
      withUnsafeMutableBytes(of: &word) { $0.copyBytes(from: bytes[offset..<offset + 4]) }
      offset += 4
      return word
    }

    /// A string argument (nil: the null string).
    public mutating func string() throws(MalformedMessage) -> String? {
      let length = Int(try uint())
      guard length > 0 else { return nil }
      let padded = (length + 3) / 4 * 4
      guard offset + padded <= bytes.count, bytes[offset + length - 1] == 0 else {
        throw MalformedMessage(why: "a string past its message")
      }
      let text = String(decoding: bytes[offset..<offset + length - 1], as: UTF8.self)
      offset += padded
      return text
    }
  }
}
