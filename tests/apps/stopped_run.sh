#!/bin/sh
# Runs `cholsim <command>` into a folder and stops it the way a user's run gets stopped
# (issue 23, D6), then checks what it left: the exit code, no *.partial anywhere, and a .pvd
# that VTK opens listing exactly the .vtu files present.
#
#   stopped_run.sh MODE CHOLSIM READER WORKDIR BASENAME cholsim-args...
#
# MODE: INT or TERM (signal once the first simulated frame exists; exit 128 + signal, a
# summary.json saying so), diskfull (a 256 KiB tmpfs in a private user + mount namespace;
# exit 2, "disk full" and the file on stderr), denied (a folder without write permission, as an unprivileged
# user; exit 2, "Permission denied"). diskfull and denied exit 77 (skipped) where the
# system allows no user namespace or no unprivileged user.
set -u
mode=$1 cholsim=$2 reader=$3 work=$4 base=$5
shift 5
rm -rf "$work" && mkdir -p "$work" || exit 1
out=$work/out

fail() { echo "FAIL: $*"; echo "--- stderr ---"; cat "$work/stderr" 2>/dev/null; exit 1; }

# No *.partial; the .pvd lists every .vtu there and VTK reads them all.
check_series() {
  partial=$(find "$1" -name '*.partial')
  [ -z "$partial" ] || fail "temporary files remain: $partial"
  frames=$(find "$1" -name "${base}_*.vtu" | wc -l)
  [ "$frames" -gt 0 ] || fail "no frame was written"
  "$reader" "$1/$base.pvd" --frames "$frames" || fail "$1/$base.pvd does not list the $frames frames present"
}

case $mode in
  INT|TERM)
    "$cholsim" "$@" --out "$out" >"$work/stdout" 2>"$work/stderr" &
    pid=$!
    tries=0
    until [ -e "$out/${base}_0001.vtu" ]; do
      tries=$((tries + 1))
      [ $tries -lt 1200 ] || { kill -KILL $pid; fail "no frame after 60 s"; }
      kill -0 $pid 2>/dev/null || fail "the run ended before it could be stopped"
      sleep 0.05
    done
    kill -"$mode" $pid
    wait $pid
    code=$?
    expected=$([ "$mode" = INT ] && echo 130 || echo 143)
    [ $code -eq $expected ] || fail "exit code $code, expected $expected"
    check_series "$out"
    grep -q "\"status\": \"interrupted by SIG$mode\"" "$out/summary.json" || fail "summary.json does not say SIG$mode"
    grep -q "\"exit_code\": $expected" "$out/summary.json" || fail "summary.json does not hold exit code $expected"
    ;;
  diskfull)
    unshare --user --map-root-user --mount true 2>/dev/null || { echo "no user namespaces here"; exit 77; }
    # The tmpfs lives as long as the namespace, so the run and the checks go in there.
    exec unshare --user --map-root-user --mount "$0" diskfull-inside "$cholsim" "$reader" "$work" "$base" "$@"
    ;;
  diskfull-inside)
    mkdir -p "$out" && mount -t tmpfs -o size=256k cholsim-test "$out" || { echo "cannot mount a tmpfs"; exit 77; }
    "$cholsim" "$@" --out "$out/run" >"$work/stdout" 2>"$work/stderr"
    code=$?
    [ $code -eq 2 ] || fail "exit code $code, expected 2"
    grep -q "cannot write $out/run/.*: disk full" "$work/stderr" || fail "stderr does not name the file and 'disk full'"
    check_series "$out/run"
    ;;
  denied)
    mkdir -p "$work/locked" && chmod 555 "$work/locked"
    as_user=""
    if [ "$(id -u)" = 0 ]; then
      command -v setpriv >/dev/null || { echo "no setpriv to drop root"; exit 77; }
      as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    fi
    $as_user "$cholsim" "$@" --out "$work/locked/run" >"$work/stdout" 2>"$work/stderr"
    code=$?
    [ $code -eq 2 ] || fail "exit code $code, expected 2"
    grep -q "cannot create the output folder $work/locked/run: Permission denied" "$work/stderr" ||
      fail "stderr does not name the folder and 'Permission denied'"
    [ ! -s "$work/stdout" ] || fail "stdout is not empty"
    ;;
  *) echo "unknown mode $mode"; exit 1 ;;
esac
echo "ok: $mode"
