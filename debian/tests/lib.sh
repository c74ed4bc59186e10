# debian/tests/lib.sh: what passlock's autopkgtests share (sourced). Each
# test makes a user of its own and removes it, with its store, at the end.
set -eu

PASSCODE=2580
TEST_USER=passlockadt
TEST_PASSWORD=adt-password-1

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# wait_for SECONDS COMMAND…: polls COMMAND every 0.1 s; 1 if it never
# succeeded.
wait_for() {
  local tenths=$(($1 * 10))
  shift
  while [ "$tenths" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
    tenths=$((tenths - 1))
  done
  return 1
}

remove_test_user() {
  loginctl terminate-user "$TEST_USER" >/dev/null 2>&1 || true
  loginctl disable-linger "$TEST_USER" >/dev/null 2>&1 || true
  userdel --remove --force "$TEST_USER" >/dev/null 2>&1 || true
  rm -rf "/var/lib/passlock/$TEST_USER"
}

add_test_user() {
  remove_test_user
  useradd --create-home --shell /bin/bash "$TEST_USER"
  printf '%s:%s\n' "$TEST_USER" "$TEST_PASSWORD" | chpasswd
  trap 'remove_test_user' EXIT
  TEST_UID=$(id -u "$TEST_USER")
}

# as_user COMMAND…: as the test user, with their user manager in reach
# where one runs.
as_user() {
  runuser -u "$TEST_USER" -- env HOME="/home/$TEST_USER" XDG_RUNTIME_DIR="/run/user/$TEST_UID" \
    DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$TEST_UID/bus" "$@"
}

# set_passcode: passlock set as the user (new passcode, again, the account
# password), in the system store.
set_passcode() {
  printf '%s\n%s\n%s\n' "$PASSCODE" "$PASSCODE" "$TEST_PASSWORD" | as_user passlock set --stdin >/dev/null \
    || fail "passlock set as $TEST_USER"
}

status_field() { # NAME: a field of passlock status --json, as written
  as_user passlock status --json | sed -nE "s/.*\"$1\":(\"[^\"]*\"|[a-z0-9]+).*/\1/p"
}
