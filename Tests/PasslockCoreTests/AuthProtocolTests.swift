import PasslockCore
import Testing

/// The gatekeeper's wire protocol: frames round-trip, garbage and forged
/// fields are refused, a status is read only from an OK answer.
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

  /// Every passcode-check answer: its frame payload, byte for byte, and back.
  @Test(
    arguments: [
      (VerifyOutcome.accepted, [0] + Array("".utf8)),
      (.wrong(failures: 3, retryAfterSeconds: 0, accountPasswordRequired: false), [1] + Array("failed_attempts=3\n".utf8)),
      (
        .wrong(failures: 6, retryAfterSeconds: 300, accountPasswordRequired: false),
        [1] + Array("failed_attempts=6\nretry_after_seconds=300\n".utf8)
      ),
      (
        .wrong(failures: 10, retryAfterSeconds: 0, accountPasswordRequired: true),
        [1] + Array("account_password_required=1\nfailed_attempts=10\n".utf8)
      ),
      (.delayed(retryAfterSeconds: 59), [75] + Array("retry_after_seconds=59\n".utf8)),
      (.accountPasswordRequired(reason: nil), [77]),
      (
        .accountPasswordRequired(reason: "the passcode is needed every 48 hours"),
        [77] + Array("message=the passcode is needed every 48 hours\n".utf8)
      ),
      (.failed(.noPasscode, message: nil), [2]),
      (.failed(.storeError, message: "refusing passcode: world-readable"), [6] + Array("message=refusing passcode: world-readable\n".utf8)),
    ] as [(VerifyOutcome, [UInt8])])
  func verifyOutcomesTravelAsTheirFrames(_ outcome: VerifyOutcome, _ payload: [UInt8]) throws {
    #expect(outcome.result.encoded() == payload)
    let decoded = try #require(AuthResult.decode(payload))
    #expect(VerifyOutcome(decoded) == outcome)
  }

  @Test func aWrongAnswerWithoutItsCountIsAProtocolError() {
    for fields in [[:], ["failed_attempts": "x"], ["failed_attempts": "-1"]] as [[String: String]] {
      guard case .failed(.protocolError, _) = VerifyOutcome(AuthResult(.mismatch, fields)) else {
        Issue.record("\(fields) decoded as something else")
        continue
      }
    }
  }

  @Test func aStatusIsReadOnlyFromAnOKAnswer() {
    let status = StoreStatus(
      passcodeSet: true, length: 4, failedAttempts: 0, retryAfterSeconds: 0, accountPasswordRequired: false,
      store: .system, directory: "/var/lib/passlock/alice", user: "alice")
    #expect(StoreStatus(AuthResult(.ok, status.fields)) == status)
    #expect(StoreStatus(AuthResult(.storeError, status.fields)) == nil)
    #expect(StoreStatus(AuthResult(.ok, ["passcode_set": "1"])) == nil)
  }

  @Test func statusTravelsAndRendersAsJSONAndText() {
    let status = StoreStatus(
      passcodeSet: true, length: 6, failedAttempts: 5, retryAfterSeconds: 59, accountPasswordRequired: false,
      store: .user, directory: "/home/a \"b\"/.local/state/passlock", user: "alice")
    #expect(StoreStatus(fields: status.fields) == status)
    #expect(
      status.json() == """
        {"passcode_set":true,"length":6,"failed_attempts":5,"retry_after_seconds":59,"account_password_required":false,\
        "password_first":null,"store":"user","store_directory":"/home/a \\"b\\"/.local/state/passlock","user":"alice",\
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
