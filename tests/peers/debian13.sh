#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# debian13.sh - PostgreSQL 17 and MariaDB 11.8, the peers scripts/peer-servers.sh runs in the
# Debian 13 chroot, checked with the host's own clients (psql, mariadb) over loopback TCP as the
# sbtest user, as sysbench reaches them:
#   - the versions are 17.x and 11.8.x, on the ports peers.env names;
#   - the settings are those of docs/compare.md "Settings", the same as the Debian 12 pair's:
#     128 MB buffer cache, durable commits, no binary log, loopback only, TLS on offer and working;
#   - (as root) each server process runs inside the chroot as the chroot's postgres/mysql user.
# As root it starts them first (`peer-servers.sh start pg17 mariadb118`: a no-op when they run;
# the first time it installs them into the chroot, about half a minute). Without root it uses a
# peers.env that already names them. Like the other integ tests it never skips: without the
# servers it fails and says how to start them.
#
#   tests/peers/debian13.sh
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export FBWIRE_STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
ENV_FILE=$FBWIRE_STATE/peers.env
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
check() { # what expected actual
  if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1: expected '$2', got '$3'"; fi
}

if [ "$(id -u)" -eq 0 ]; then
  [ -r "$FBWIRE_STATE/servers.env" ] ||
    { echo "FAIL: no $FBWIRE_STATE/servers.env (and so no Debian 13 chroot): run scripts/fb-servers.sh start"; exit 1; }
  "$REPO/scripts/peer-servers.sh" start pg17 mariadb118 >/dev/null ||
    { echo "FAIL: scripts/peer-servers.sh start pg17 mariadb118"; exit 1; }
fi
START="as root: scripts/peer-servers.sh start pg17 mariadb118"
[ -r "$ENV_FILE" ] || { echo "FAIL: no $ENV_FILE; $START"; exit 1; }
set -a
# shellcheck disable=SC1090
. "$ENV_FILE"
set +a
if [ -z "${PEER_PG17_VERSION:-}" ] || [ -z "${PEER_MARIADB118_VERSION:-}" ]; then
  echo "FAIL: PostgreSQL 17 / MariaDB 11.8 not running when $ENV_FILE was written; $START"
  exit 1
fi

# ---------------------------------------------------------------- PostgreSQL 17

pg() { # SQL -> one value, as sbtest over TCP; PGSSLMODE from the caller's environment
  PGPASSWORD=$PEER_PG17_PASSWORD PGCONNECT_TIMEOUT=10 psql -X -At -h "$PEER_PG17_HOST" \
    -p "$PEER_PG17_PORT" -U "$PEER_PG17_USER" -d "$PEER_PG17_DB" -c "$1" 2>&1
}
check "pg17 port" 5434 "$PEER_PG17_PORT"
v=$(PGSSLMODE=disable pg "SHOW server_version")
case $v in 17.*) ok "pg17 answers: PostgreSQL ${v%% *}" ;; *) fail "pg17 server_version: '$v'" ;; esac
check "pg17 version in peers.env" "${v%% *}" "$PEER_PG17_VERSION"
for kv in shared_buffers=128MB fsync=on synchronous_commit=on full_page_writes=on \
          listen_addresses=127.0.0.1 max_connections=100 ssl=on password_encryption=scram-sha-256; do
  check "pg17 ${kv%%=*}" "${kv#*=}" "$(PGSSLMODE=disable pg "SHOW ${kv%%=*}")"
done
check "pg17 TLS when the client asks (PGSSLMODE=require)" t \
  "$(PGSSLMODE=require pg "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")"
check "pg17 no TLS when the client does not ask" f \
  "$(PGSSLMODE=disable pg "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")"

# ---------------------------------------------------------------- MariaDB 11.8

my() { # SQL -> one value, as sbtest over TCP
  MYSQL_PWD=$PEER_MARIADB118_PASSWORD mariadb --no-defaults --connect-timeout=10 -N -B \
    -h "$PEER_MARIADB118_HOST" -P "$PEER_MARIADB118_PORT" -u "$PEER_MARIADB118_USER" "$@" 2>&1
}
check "mariadb118 port" 3308 "$PEER_MARIADB118_PORT"
v=$(my -e "SELECT VERSION()")
case $v in 11.8.*) ok "mariadb118 answers: MariaDB ${v%%-*}" ;; *) fail "mariadb118 VERSION(): '$v'" ;; esac
check "mariadb118 version in peers.env" "${v%%-*}" "$PEER_MARIADB118_VERSION"
for kv in innodb_buffer_pool_size=134217728 innodb_flush_log_at_trx_commit=1 innodb_doublewrite=ON \
          log_bin=0 bind_address=127.0.0.1 max_connections=200 have_ssl=YES; do
  check "mariadb118 ${kv%%=*}" "${kv#*=}" "$(my -e "SELECT @@${kv%%=*}")"
done
check "mariadb118 database sbtest" "$PEER_MARIADB118_DB" "$(my "$PEER_MARIADB118_DB" -e "SELECT DATABASE()")"
c=$(my --ssl -e "SHOW SESSION STATUS LIKE 'Ssl_version'")
case $c in *TLSv1.[23]*) ok "mariadb118 TLS when the client asks: ${c##*[[:space:]]}" ;;
  *) fail "mariadb118 TLS with --ssl: '$c'" ;; esac

# ---------------------------------------------------------------- where they run

in_chroot_as() { # user pid: the process's root is the chroot, its uid the chroot's user
  local want
  want=$(awk -F: -v u="$1" '$1 == u { print $3 }' "$PEER_CHROOT/etc/passwd")
  if [ -z "$2" ] || [ ! -d "/proc/$2" ]; then fail "$1: no server process"; return; fi
  check "$1 server (pid $2) root directory" "$(readlink -f "$PEER_CHROOT")" "$(readlink "/proc/$2/root")"
  check "$1 server (pid $2) uid: the chroot's $1" "$want" "$(awk '/^Uid:/ { print $2 }' "/proc/$2/status")"
}
if [ "$(id -u)" -eq 0 ]; then
  in_chroot_as postgres "$(head -n 1 "$PEER_PG17_DATA/postmaster.pid" 2>/dev/null)"
  in_chroot_as mysql "$(tr -dc 0-9 <"$(dirname "$PEER_MARIADB118_CNF")/../run/mariadb118/mariadb.pid" 2>/dev/null)"
fi

[ "$FAILS" = 0 ] && echo "all checks passed" || echo "$FAILS check(s) failed"
[ "$FAILS" = 0 ]
