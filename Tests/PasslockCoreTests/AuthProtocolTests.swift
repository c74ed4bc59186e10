import PasslockCore
import Testing

@Suite struct AuthProtocolTests {
  @Test func headersRoundTripAndRejectGarbage() {
    let header = AuthProtocol.header(.secret, length: 300)
    #expect(header == [0x02, 0x01, 0x2c])
    #expect(AuthProtocol.parseHeader(header)! == (AuthProtocol.FrameKind.secret, 300))
    #expect(AuthProtocol.parseHeader([0x99, 0, 1]) == nil)
    #expect(AuthProtocol.parseHeader([0x02, 0xff, 0xff]) == nil)  // over maxPayload
  }

  @Test func resultsRoundTripWithoutForgedFields() {
    let result = AuthResult(.mismatch, ["failed_attempts": "3", "message": "one\nretry_after_seconds=0"])
    let decoded = AuthResult.decode(result.encoded())
    #expect(decoded?.code == .mismatch)
    #expect(decoded?.fields["failed_attempts"] == "3")
    #expect(decoded?.fields["retry_after_seconds"] == nil)
    #expect(AuthResult.decode([200]) == nil)
  }

  @Test func statusTravelsAndRendersAsJSONAndText() {
    let status = StoreStatus(
      passcodeSet: true, length: 6, failedAttempts: 5, retryAfterSeconds: 59, accountPasswordRequired: false,
      store: .user, directory: "/home/a \"b\"/.local/state/passlock", user: "alice")
    #expect(StoreStatus(fields: status.fields) == status)
    #expect(
      status.json() == """
        {"passcode_set":true,"length":6,"failed_attempts":5,"retry_after_seconds":59,"account_password_required":false,\
        "store":"user","store_directory":"/home/a \\"b\\"/.local/state/passlock","user":"alice",\
        "daemon":null}
        """)
    #expect(
      status.text() == """
        Passcode: set (6 digits)
        Failed attempts: 5
        Next try allowed in: 0:59
        Store: user (not setuid; development mode) /home/a "b"/.local/state/passlock

        """)
  }

  @Test(arguments: [(0, "0:00"), (59, "0:59"), (299, "4:59"), (3600, "1:00:00"), (3661, "1:01:01")] as [(Int64, String)])
  func clockText(_ seconds: Int64, _ text: String) {
    #expect(TimeText.clock(seconds) == text)
  }
}
