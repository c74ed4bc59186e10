import PasslockCore
import Testing

/// pam_passlock.so's arguments: the known ones, and errors for the rest.
@Suite struct PAMModuleOptionsTests {
  @Test func knownArguments() throws {
    let options = try PAMModuleOptions.parse([
      "debug", "allow_remote", "try_first_pass", "use_first_pass", "use_authtok", "store_dir=/srv/passlock",
      "helper=/opt/bin/passlock-auth",
    ]).get()
    #expect(options.debug && options.allowRemote)
    #expect(options.storeDirectory == "/srv/passlock")
    #expect(options.helper == "/opt/bin/passlock-auth")
    #expect(try PAMModuleOptions.parse([]).get() == PAMModuleOptions())
  }

  @Test(arguments: ["nodebug", "store_dir=relative", "helper=", "debug=1", ""])
  func unknownOrMalformedArgumentsAreErrors(_ argument: String) {
    #expect(PAMModuleOptions.parse([argument]) == .failure(PAMOptionError(argument: argument)))
  }
}
