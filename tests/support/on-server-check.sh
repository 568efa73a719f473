#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# on-server-check.sh - tests/support/on-server.sh on state dirs written here (no server needed):
# an unregistered name exits 77 with the reason; a registered one puts its settings in fb4's place
# in the environment, in $FBW_SERVERS_ENV and in $FBWIRE_STATE/servers.env alike, keeps fb3 and
# the rest of the state dir, and passes the command's exit status through.
set -euo pipefail
ON=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/on-server.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/state/db"
cat >"$work/state/servers.env" <<'EOF'
FBW_USER=SYSDBA
FBW_PASSWORD=main-pw
FBW_FB3_HOST=127.0.0.1
FBW_FB3_PORT=3050
FBW_FB3_DB=/s/db/fb3/fbwire_test.fdb
FBW_FB4_HOST=127.0.0.1
FBW_FB4_PORT=3051
FBW_FB4_DB=/chroot/fbwire/fbwire_test.fdb
FBW_FB4_VERSION=4.0.5
FBW_DBDIR_FB4=/chroot/fbwire
FBW_DBDIR_FB4_HOST=/s/fb4-chroot/chroot/fbwire
# >>> registered servers (start-install, register)
FBW_FB5_HOST=127.0.0.1
FBW_DBDIR_FB5=/s/db/fb5
FBW_FB5_PORT=3060
FBW_FB5_DB=/s/db/fb5/fbwire_test.fdb
FBW_FB5_VERSION=5.0.4
FBW_FB6_HOST=fbhost
FBW_FB6_USER=ADMIN
FBW_FB6_PASSWORD=fb6-pw
FBW_DBDIR_FB6=/srv/fb
FBW_FB6_PORT=3050
FBW_FB6_DB=/srv/fb/fbwire_test.fdb
FBW_FB6_VERSION=6.0.0.1
EOF
echo peers >"$work/state/peers.env"

# What a test sees: the environment, the file it is pointed to, the state dir's file.
show() {
  cat >"$work/show.sh" <<'EOF'
f() { awk -v k="$1" 'index($0, k "=") == 1 { sub(/^[^=]*=/, ""); print; exit }' "$2"; }
for k in FBW_FB3_PORT FBW_FB4_HOST FBW_FB4_PORT FBW_FB4_DB FBW_FB4_VERSION FBW_DBDIR_FB4 FBW_DBDIR_FB4_HOST FBW_USER FBW_PASSWORD FBW_TARGET; do
  e=${!k-unset} a=$(f "$k" "$FBW_SERVERS_ENV") b=$(f "$k" "$FBWIRE_STATE/servers.env")
  [ "$e" = "$a" ] && [ "$a" = "$b" ] || { echo "MISMATCH $k env=$e file=$a state=$b"; exit 9; }
  echo "$k=$e"
done
cat "$FBWIRE_STATE/peers.env"
EOF
  env -u FBW_FB3_PORT FBWIRE_STATE="$work/state" FBW_SERVERS_ENV= "$ON" "$1" bash "$work/show.sh"
}

rc=0; out=$(FBWIRE_STATE="$work/state" "$ON" fb7 true) || rc=$?
[ "$rc" = 77 ] || fail "unregistered fb7: exit $rc, want 77"
grep -q "SKIP: fb7 is not registered" <<<"$out" || fail "no reason for the skip: $out"
rc=0; out=$(FBWIRE_STATE="$work/none" "$ON" fb5 true) || rc=$?
if [ "$rc" != 77 ] || ! grep -q "SKIP: fb5: no $work/none/servers.env" <<<"$out"; then fail "no env file: $rc $out"; fi

out=$(show fb5) || fail "fb5 run: $out"
for want in FBW_FB3_PORT=3050 FBW_FB4_HOST=127.0.0.1 FBW_FB4_PORT=3060 FBW_FB4_DB=/s/db/fb5/fbwire_test.fdb \
            FBW_FB4_VERSION=5.0.4 FBW_DBDIR_FB4=/s/db/fb5 FBW_DBDIR_FB4_HOST=/s/db/fb5 FBW_USER=SYSDBA \
            FBW_PASSWORD=main-pw FBW_TARGET=fb5 peers; do
  grep -qx "$want" <<<"$out" || fail "fb5: want $want in: $out"
done
out=$(show fb6) || fail "fb6 run: $out"
for want in FBW_FB4_HOST=fbhost FBW_FB4_PORT=3050 FBW_DBDIR_FB4=/srv/fb FBW_DBDIR_FB4_HOST=/srv/fb \
            FBW_USER=ADMIN FBW_PASSWORD=fb6-pw FBW_TARGET=fb6; do
  grep -qx "$want" <<<"$out" || fail "fb6: want $want in: $out"
done
rc=0; FBWIRE_STATE="$work/state" "$ON" fb5 sh -c 'exit 3' >/dev/null || rc=$?
[ "$rc" = 3 ] || fail "exit status not passed through: $rc"
[ "$(grep -c FBW_FB4_PORT=3051 "$work/state/servers.env")" = 1 ] || fail "the real servers.env changed"
echo "on-server.sh: skip, fb4 slot for an installation and a registered login, exit status: ok"
