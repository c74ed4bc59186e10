# Tests/System/session.sh — a real TTY login session in the booted container,
# typed into and read like a person at a console. Sourced after bed.sh.
#   session_start USER  login -f USER under script(1): the pty belongs to USER
#                       (exec: Debian 13's util-linux login, left as script's
#                       child shell's child, is stopped by SIGTTOU)
#   type_keys TEXT      what the person types (printf format: '2580', 'ls\r')
#   screen_mark         the current end of what the session showed
#   wait_screen TEXT MARK [SECONDS]   TEXT appeared after MARK
#   session_id          logind's id for the session

# The session's stdin is a FIFO we keep open on fd 7; its "screen" is the byte
# stream script(1) copies from the pty, in $BED_WORK/screen.
session_start() {
  local user=$1
  mkfifo "$BED_WORK/keys"
  : >"$BED_WORK/screen"
  inside systemd-run --quiet --pipe --unit="passlock-test-login" --setenv=TERM=xterm \
    script -qfec "exec login -f $user" /dev/null <"$BED_WORK/keys" >"$BED_WORK/screen" 2>&1 &
  SESSION_RUNNER=$!
  exec 7>"$BED_WORK/keys"
  SESSION_USER=$user
  SESSION_ID=
  wait_for "a logind session for $user" 20 session_id >/dev/null
  SESSION_ID=$(session_id)
  # The shell is up once it answers.
  local mark
  mark=$(screen_mark)
  type_keys 'echo shell-is-\x72eady\r'
  wait_screen "shell-is-ready" "$mark" 20 || return
  # The user manager's bus comes a moment after the shell on a busy machine.
  wait_for "$user's user manager bus" 20 inside test -S "/run/user/$(inside id -u "$user")/bus"
}

session_stop() {
  [ -n "${SESSION_RUNNER:-}" ] || return 0
  exec 7>&- || true
  SESSION_ID=
  inside systemctl stop passlock-test-login.service >/dev/null 2>&1 || true
  wait "$SESSION_RUNNER" 2>/dev/null || true
  SESSION_RUNNER=
}

type_keys() { printf "$1" >&7; }

screen_mark() { stat -c %s "$BED_WORK/screen"; }

# What the session showed after MARK, escape sequences and all.
screen_since() { tail -c +"$(($1 + 1))" "$BED_WORK/screen" | tr -d '\000'; }

wait_screen() {
  local text=$1 mark=$2 seconds=${3:-10}
  wait_for "'$text' on the session's terminal" "$seconds" eval 'screen_since "$mark" | grep -qF -- "$text"'
}

# The session started by session_start (the user may log in again meanwhile,
# from elsewhere: that one is not "the session").
session_id() {
  [ -z "${SESSION_ID:-}" ] || { echo "$SESSION_ID"; return 0; }
  local id
  for id in $(inside loginctl show-user "$SESSION_USER" -p Sessions --value 2>/dev/null); do
    [ "$(inside loginctl show-session "$id" -p Type --value)" = tty ] && { echo "$id"; return 0; }
  done
  return 1
}

session_prop() { inside loginctl show-session "$(session_id)" -p "$1" --value; }

session_tty() { echo "/dev/$(session_prop TTY)"; }

# The lock screen on the session's terminal (or on TTY, which saves asking
# logind when polling), seen from the host's /proc.
lock_screen_pids() { pgrep -f "^passlock lock --tty ${1:-$(session_tty)}( |$)" || true; }

# wait_for DESCRIPTION SECONDS COMMAND…: polls every 50 ms.
wait_for() {
  local what=$1 seconds=$2
  shift 2
  local deadline=$(($(date +%s%N) + seconds * 1000000000))
  while [ "$(date +%s%N)" -lt "$deadline" ]; do
    "$@" && return 0
    sleep 0.05
  done
  "$@" && return 0
  fail "timed out after ${seconds} s waiting for $what"
  return 1
}
