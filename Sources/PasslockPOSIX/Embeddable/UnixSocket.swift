import CLinux
import Glibc

/// AF_UNIX sockets: the calls the daemon, its bus connection and its control
/// socket make (socket(2), connect(2), bind(2), listen(2), accept4(2),
/// send(2), sendto(2), recvmsg(2) with SCM_RIGHTS), each once, here. Every
/// descriptor is close-on-exec.
public enum UnixSocket {
  /// A connected stream socket. `nonBlocking`: EAGAIN instead of a wait
  /// when the listener's backlog is full (a stopped or hung server).
  public static func connect(_ address: UnixSocketAddress, nonBlocking: Bool = false) throws(SystemError) -> FileDescriptor {
    let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
    let fd = socket(AF_UNIX, flags, 0)
    guard fd >= 0 else { throw SystemError("socket") }
    guard address.withSockaddr({ (pointer, length) in retryingInterrupts { Glibc.connect(fd, pointer, length) } }) == 0 else {
      let error = SystemError("connect")
      Glibc.close(fd)
      throw error
    }
    return FileDescriptor(rawValue: fd)
  }

  /// A listening stream socket bound to `address`.
  public static func listen(at address: UnixSocketAddress, backlog: Int32) throws(SystemError) -> FileDescriptor {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket") }
    guard address.withSockaddr({ bind(fd, $0, $1) }) == 0, Glibc.listen(fd, backlog) == 0 else {
      let error = SystemError("bind")
      Glibc.close(fd)
      throw error
    }
    return FileDescriptor(rawValue: fd)
  }

  /// The next connection waiting on `listener`, or nil.
  public static func accept(_ listener: FileDescriptor) -> FileDescriptor? {
    let fd = retryingInterrupts { accept4(listener.rawValue, nil, nil, Int32(SOCK_CLOEXEC.rawValue)) }
    return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
  }

  /// send(2) once, never raising SIGPIPE: bytes sent, or the error (EAGAIN
  /// on a full non-blocking socket).
  public static func send(_ fd: FileDescriptor, _ bytes: ArraySlice<UInt8>) -> Result<Int, SystemError> {
    let n = retryingInterrupts { bytes.withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
    return n >= 0 ? .success(n) : .failure(SystemError("send"))
  }

  /// One datagram to `address` from a socket of its own (sd_notify's way).
  public static func sendDatagram(_ text: String, to address: UnixSocketAddress) {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return }
    defer { Glibc.close(fd) }
    _ = text.withCString { bytes in address.withSockaddr { sendto(fd, bytes, strlen(bytes), Int32(MSG_NOSIGNAL), $0, $1) } }
  }

  /// What one recvmsg(2) brought.
  public struct Received {
    /// Bytes read into the buffer; 0 at the end of the stream.
    public var count: Int
    /// Descriptors passed with them (close-on-exec), now the caller's.
    public var descriptors: [Int32]
    /// MSG_CTRUNC: some descriptors did not arrive (the kernel closed them).
    public var truncated: Bool
  }

  /// recvmsg(2) into `buffer`, with room for `descriptorRoom` passed
  /// descriptors (SCM_RIGHTS); EAGAIN on an empty non-blocking socket.
  public static func receive(
    _ fd: FileDescriptor, into buffer: inout [UInt8], descriptorRoom: Int
  ) -> Result<Received, SystemError> {
    var control = [UInt8](repeating: 0, count: MemoryLayout<cmsghdr>.size + descriptorRoom * 4 + 16)
    var result: Result<Received, SystemError> = .failure(SystemError("recvmsg", errno: EIO))
    buffer.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { controlBytes in
        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
        withUnsafeMutablePointer(to: &vector) { vectorPointer in
          var header = msghdr()
          header.msg_iov = vectorPointer
          header.msg_iovlen = 1
          header.msg_control = controlBytes.baseAddress
          header.msg_controllen = controlBytes.count
          let n = retryingInterrupts { recvmsg(fd.rawValue, &header, Int32(MSG_CMSG_CLOEXEC)) }
          guard n >= 0 else {
            result = .failure(SystemError("recvmsg"))
            return
          }
          result = .success(
            Received(count: n, descriptors: passedDescriptors(header), truncated: header.msg_flags & Int32(MSG_CTRUNC) != 0))
        }
      }
    }
    return result
  }

  /// SCM_RIGHTS descriptors in a received message's control data.
  private static func passedDescriptors(_ header: msghdr) -> [Int32] {
    var found: [Int32] = []
    guard let control = header.msg_control, header.msg_controllen >= MemoryLayout<cmsghdr>.size else { return found }
    var offset = 0
    while offset + MemoryLayout<cmsghdr>.size <= header.msg_controllen {
      let message = control.advanced(by: offset).assumingMemoryBound(to: cmsghdr.self).pointee
      let length = Int(message.cmsg_len)
      guard length >= MemoryLayout<cmsghdr>.size, offset + length <= header.msg_controllen else { break }
      if message.cmsg_level == SOL_SOCKET && message.cmsg_type == Int32(SCM_RIGHTS) {
        let count = (length - MemoryLayout<cmsghdr>.size) / MemoryLayout<Int32>.size
        let data = control.advanced(by: offset + MemoryLayout<cmsghdr>.size)
        for i in 0..<count { found.append(data.load(fromByteOffset: i * 4, as: Int32.self)) }
      }
      offset += (length + MemoryLayout<Int>.size - 1) / MemoryLayout<Int>.size * MemoryLayout<Int>.size
    }
    return found
  }

  /// A receive timeout (SO_RCVTIMEO): a client that never writes does not stall a server.
  public static func setReceiveTimeout(_ fd: FileDescriptor, seconds: Int) {
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }
}

/// Who is at the other end of a Unix socket (getsockopt SO_PEERCRED), as the
/// kernel recorded it when they connected.
public struct PeerCredentials: Equatable, Sendable {
  public var pid: pid_t
  public var uid: uid_t
  public var gid: gid_t

  public static func of(_ socket: Int32) throws(SystemError) -> PeerCredentials {
    var peer = passlock_peer_credentials()
    guard passlock_get_peer_credentials(socket, &peer) == 0 else { throw SystemError("getsockopt SO_PEERCRED") }
    return PeerCredentials(pid: peer.pid, uid: peer.uid, gid: peer.gid)
  }
}
