/// "Passcode only while locked" ([Authentication] PasscodeOnlyWhileLocked in
/// the root-held file): a display manager's own PAM stack, which serves its
/// login screen and, for GDM, the unlock dialog of a locked session alike,
/// is offered the passcode only while logind says a session of the user's
/// is locked (LockedHint): an unlock, never a login.
public enum DisplayManagerStack {
  /// The PAM services display managers authenticate with (GDM, SDDM,
  /// LightDM, LXDM, XDM, greetd, Ly).
  public static let services: Set<String> = ["gdm-password", "sddm", "lightdm", "lxdm", "xdm", "greetd", "ly"]

  /// Whether the passcode may be offered to PAM service `service`, given
  /// the policy and whether a session of the user's is locked (asked only
  /// when it matters: it costs a call to logind).
  public static func allows(service: String?, onlyWhileLocked: Bool, anyLocked: () -> Bool) -> Bool {
    guard onlyWhileLocked, let service, services.contains(service) else { return true }
    return anyLocked()
  }
}
