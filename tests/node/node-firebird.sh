#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# node-firebird.sh BUILD_DIR - fbwire-pcap on a third-party client: node-firebird (pure
# JavaScript, pinned version from npm, installed into BUILD_DIR/node-firebird) runs a session of
# its own (tests/node/session.js) against FB3 and FB4 under tcpdump; tests/node/check.py checks
# stats, dump and replay --list of the capture against what the session says it did. Once more
# with node-firebird's default wire crypt: the connection must show as encrypted with no key,
# never as garbage. Exit 77 (skipped, with the reason) without npm/node, root, or registry access.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:?usage: node-firebird.sh BUILD_DIR}
TOOL=$BUILD/tools/fbwire-pcap
PIN=2.17.1
# node-firebird has no timeout of its own: a server it cannot follow leaves it waiting forever
SESSION_S=${FBWIRE_NODE_TIMEOUT:-60}  # 3 sessions and their drops stay within ctest's 300 s
skip() { echo "SKIP: $*"; exit 77; }
command -v npm >/dev/null && command -v node >/dev/null ||
  skip "npm and node are not installed (apt-get install nodejs npm): cannot install node-firebird"
[ "$(id -u)" = 0 ] || skip "tcpdump on lo needs root"
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -r "$ENV_FILE" ] || { echo "FAIL: no $ENV_FILE: start the servers (scripts/fb-servers.sh start)"; exit 1; }
set -a; . "$ENV_FILE"; set +a
NODE=$BUILD/node-firebird
if [ "$(node -p "require('$NODE/node_modules/node-firebird/package.json').version" 2>/dev/null)" != "$PIN" ]; then
  mkdir -p "$NODE"
  npm install --prefix "$NODE" --no-audit --no-fund --no-save --silent "node-firebird@$PIN" \
    >/dev/null 2>"$NODE/npm.err" ||
    skip "npm install node-firebird@$PIN failed (no registry access?): $(tail -1 "$NODE/npm.err")"
fi
export NODE_PATH=$NODE/node_modules ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-node.XXXXXX")
chmod 777 "$WORK" # tcpdump drops privileges before writing
trap 'rm -rf "$WORK"' EXIT
status=0
# run NAME HOST PORT DBDIR CRYPT
run() {
  local name=$1 crypt=$5
  export FBN_HOST=$2 FBN_PORT=$3 FBN_DB=$4/fbwire_node_$$_$name.fdb FBN_TABLE=FBW_NODE_$$ FBN_CRYPT=$crypt
  echo "--- $name: node-firebird $PIN on $2:$3$([ "$crypt" = 1 ] && echo ', default wire crypt')"
  local rc=0
  "$SRC/scripts/capture.sh" "$WORK/$name.pcap" "tcp port $3" -- \
    timeout "$SESSION_S" node "$SRC/tests/node/session.js" >"$WORK/$name.json" 2>"$WORK/$name.err" || rc=$?
  if [ "$rc" = 124 ]; then
    echo "FAIL: $name: the session did not finish in $SESSION_S s; its packets so far:"
    "$TOOL" dump "$WORK/$name.pcap" 2>&1 | tail -5; status=1
  elif [ "$rc" != 0 ]; then
    echo "FAIL: $name: the session failed:"; cat "$WORK/$name.err"; status=1
  else
    python3 "$SRC/tests/node/check.py" "$TOOL" "$WORK/$name.pcap" "$WORK/$name.json" "$crypt" \
      "fbwire_node_$$_$name.fdb" || status=1
  fi
  FBN_MODE=drop timeout 30 node "$SRC/tests/node/session.js" 2>/dev/null || true
}
run fb3 "$FBW_FB3_HOST" "$FBW_FB3_PORT" "$FBW_DBDIR_FB3" 0
run fb4 "$FBW_FB4_HOST" "$FBW_FB4_PORT" "$FBW_DBDIR_FB4" 0
run fb4_crypt "$FBW_FB4_HOST" "$FBW_FB4_PORT" "$FBW_DBDIR_FB4" 1
exit $status
