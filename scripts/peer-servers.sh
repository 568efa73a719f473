#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# peer-servers.sh - the servers Firebird is compared with (tools/fbwire-compare), set up so that
# the comparison is fair: PostgreSQL 15 and MariaDB 10.11 from the Debian packages, each with its
# own data directory under the state dir, plus the benchmark databases on the Firebird servers of
# scripts/fb-servers.sh. "Peer" as in docs: the other engines a Firebird user compares with.
#
#   scripts/peer-servers.sh start [pg|mariadb|fb ...] | stop | status | env
#
#   pg       PostgreSQL 15, 127.0.0.1:5433 (PEER_PG_PORT), user and database sbtest
#   mariadb  MariaDB 10.11, 127.0.0.1:3307 (PEER_MARIADB_PORT), user and database sbtest
#   fb       sbtest.fdb on fb3 (3050) and fb4 (3051), 16384 page buffers, forced writes
#            (needs `scripts/fb-servers.sh start` first; that script owns the servers)
#
# Settings that make the engines comparable (the reason for each is in docs/compare.md,
# "Settings"): the same 128 MB buffer cache (shared_buffers, innodb_buffer_pool_size, Firebird
# page buffers of the benchmark database: 16384 x 8 KB), durable commits (fsync +
# synchronous_commit, innodb_flush_log_at_trx_commit=1, forced writes), no binary log, loopback
# TCP only. TLS is configured on both peers with a self-signed certificate made here, and used
# only when the client asks (PGSSLMODE=require, sysbench --mysql-ssl=on), as Firebird's servers
# run WireCrypt = Enabled and leave the choice to the client: fbwire-compare --crypt asks for it
# on all of them, without --crypt nobody does.
#
# `start` installs the packages if missing (the Debian services are neither needed nor started),
# initialises, configures, starts, waits for the ports and creates user and database; each step
# checks before it acts, so a second `start` only verifies. Passwords are generated once, kept in
# <state>/secrets and written to <state>/peers.env (mode 0600), never printed. Runs as root.
# State dir: $FBWIRE_STATE, default <repo>/.fbwire (the same as fb-servers.sh).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${FBWIRE_STATE:-$REPO/.fbwire}
PEERS=$STATE/peers
RUN=$PEERS/run
PG_RUN=$RUN/pg    # logs and sockets, writable by the server's own user
MY_RUN=$RUN/mariadb
SECRETS=$STATE/secrets
ENV_FILE=$STATE/peers.env

PG_BIN=/usr/lib/postgresql/15/bin
PG_DATA=$PEERS/pg
PG_PORT=${PEER_PG_PORT:-5433}
MY_DIR=$PEERS/mariadb
MY_DATA=$MY_DIR/data
MY_CNF=$MY_DIR/my.cnf
MY_PORT=${PEER_MARIADB_PORT:-3307}
TLS=$PEERS/tls
FB_DB=sbtest.fdb
FB_PAGE_BUFFERS=16384 # x 8 KB pages = 128 MB, the buffer cache every engine gets
BENCH_USER=sbtest
INSTANCES=(pg mariadb fb)

log() { printf '[peer-servers %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# port_open, wait_port, secret, write_if_changed
. "$REPO/scripts/servers-lib.sh"

ensure_packages() {
  local need=() p
  for p in postgresql-15 mariadb-server mariadb-client openssl; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] || "$REPO/scripts/install-deps.sh" "${need[@]}"
}

# One self-signed certificate for both peers; each gets a copy of the key it may read alone.
ensure_tls() {
  install -d -m 0755 "$TLS"
  if [ ! -s "$TLS/server.crt" ] || [ ! -s "$TLS/server.key" ]; then
    log "making a self-signed TLS certificate for 127.0.0.1"
    (umask 077
     openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=127.0.0.1 \
       -addext subjectAltName=IP:127.0.0.1 -keyout "$TLS/server.key" -out "$TLS/server.crt" \
       >"$TLS/openssl.log" 2>&1) || die "openssl failed, see $TLS/openssl.log"
    chmod 0644 "$TLS/server.crt"
  fi
  # sysbench's MySQL driver, with --mysql-ssl=on, loads client-key.pem, client-cert.pem and
  # cacert.pem from its working directory and fails without them: a client pair for that
  if [ ! -s "$TLS/client.crt" ] || [ ! -s "$TLS/client.key" ]; then
    (umask 077
     openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=sbtest \
       -keyout "$TLS/client.key" -out "$TLS/client.crt" >>"$TLS/openssl.log" 2>&1) ||
      die "openssl failed, see $TLS/openssl.log"
    chmod 0644 "$TLS/client.crt"
  fi
  # MariaDB checks a client certificate it is shown against ssl_ca: trust both of ours
  cat "$TLS/server.crt" "$TLS/client.crt" | write_if_changed "$TLS/ca.pem" root 0644 || true
  install -o postgres -g postgres -m 0600 "$TLS/server.key" "$TLS/pg.key"
  install -o mysql -g mysql -m 0600 "$TLS/server.key" "$TLS/mariadb.key"
}

# ---------------------------------------------------------------- PostgreSQL

pg() { runuser -u postgres -- "$PG_BIN/$1" "${@:2}"; }

pg_running() { [ -f "$PG_DATA/postmaster.pid" ] && pg pg_ctl -D "$PG_DATA" status >/dev/null 2>&1; }

pg_psql() { # SQL on stdin, as the superuser over the private socket
  runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -d postgres "$@"
}

configure_pg() { # returns 0 when the server must be (re)started to see a change
  local changed=1
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    log "initdb $PG_DATA"
    install -d -o postgres -g postgres -m 0700 "$PG_DATA"
    pg initdb -D "$PG_DATA" -U postgres -E UTF8 --locale=C --auth-local=peer \
      --auth-host=scram-sha-256 >"$PG_RUN/pg-initdb.log" 2>&1 || die "initdb failed, see $PG_RUN/pg-initdb.log"
    echo "include 'fbwire.conf'" >>"$PG_DATA/postgresql.conf"
    changed=0
  fi
  write_if_changed "$PG_DATA/fbwire.conf" postgres 0600 <<EOF && changed=0
# written by scripts/peer-servers.sh; reasons in docs/compare.md, "Settings"
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_RUN'
max_connections = 100
shared_buffers = 128MB
fsync = on
synchronous_commit = on
full_page_writes = on
password_encryption = 'scram-sha-256'
ssl = on
ssl_cert_file = '$TLS/server.crt'
ssl_key_file = '$TLS/pg.key'
EOF
  write_if_changed "$PG_DATA/pg_hba.conf" postgres 0600 <<EOF && changed=0
# written by scripts/peer-servers.sh: the superuser over the private socket, sbtest over TCP
local all postgres peer
host  all $BENCH_USER 127.0.0.1/32 scram-sha-256
EOF
  return $changed
}

start_pg() {
  local changed=1
  configure_pg && changed=0
  if pg_running && [ "$changed" = 0 ]; then
    log "pg: configuration changed, restarting"
    pg pg_ctl -D "$PG_DATA" -m fast -w stop >/dev/null
  fi
  if ! pg_running; then
    port_open "$PG_PORT" && die "port $PG_PORT is taken by another process"
    # a session of its own (a server left in the caller's process group dies with it), and
    # without our lock fd: a server holding it would block every later start or stop
    setsid -w runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_RUN/pg.log" -w -t 60 start 9>&- \
      >/dev/null || die "PostgreSQL did not start, see $PG_RUN/pg.log"
    log "pg: started on port $PG_PORT"
  fi
  wait_port "$PG_PORT" 30 || die "PostgreSQL does not listen on $PG_PORT"
  pg_psql <<EOF >/dev/null
SELECT 'CREATE ROLE $BENCH_USER LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$BENCH_USER') \\gexec
ALTER ROLE $BENCH_USER LOGIN PASSWORD '$PG_PW';
SELECT 'CREATE DATABASE $BENCH_USER OWNER $BENCH_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$BENCH_USER') \\gexec
EOF
}

stop_pg() {
  pg_running || return 0
  log "stopping pg"
  pg pg_ctl -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null
}

pg_version() { pg_psql -At -c "SHOW server_version" 2>/dev/null | awk '{ print $1 }' || true; }

# ---------------------------------------------------------------- MariaDB

my_pid() { # the running server's pid, or nothing
  local pid; pid=$(tr -dc 0-9 2>/dev/null <"$MY_RUN/mariadb.pid" || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] && echo "$pid" || true
}

my_sql() { # SQL on stdin, as root over the private socket (unix_socket authentication)
  mariadb --no-defaults -uroot --socket="$MY_RUN/mariadb.sock" -N -B "$@"
}

configure_mariadb() { # returns 0 when the server must be (re)started to see a change
  local changed=1
  install -d -o mysql -g mysql -m 0750 "$MY_DIR"
  write_if_changed "$MY_CNF" root 0644 <<EOF && changed=0
# written by scripts/peer-servers.sh; reasons in docs/compare.md, "Settings". Read with
# --defaults-file, so nothing under /etc/mysql applies.
[mariadbd]
user = mysql
datadir = $MY_DATA
port = $MY_PORT
bind-address = 127.0.0.1
socket = $MY_RUN/mariadb.sock
pid-file = $MY_RUN/mariadb.pid
log-error = $MY_RUN/mariadb.log
skip-name-resolve
max_connections = 200
innodb_buffer_pool_size = 128M
innodb_flush_log_at_trx_commit = 1
innodb_doublewrite = 1
skip-log-bin
ssl_cert = $TLS/server.crt
ssl_key = $TLS/mariadb.key
ssl_ca = $TLS/ca.pem
EOF
  if [ ! -d "$MY_DATA/mysql" ]; then
    log "mariadb-install-db $MY_DATA"
    rm -rf --one-file-system "$MY_DATA"
    install -d -o mysql -g mysql -m 0750 "$MY_DATA"
    mariadb-install-db --defaults-file="$MY_CNF" --user=mysql --auth-root-authentication-method=socket \
      --skip-test-db >"$MY_RUN/mariadb-install.log" 2>&1 || die "mariadb-install-db failed, see $MY_RUN/mariadb-install.log"
    changed=0
  fi
  return $changed
}

start_mariadb() {
  local changed=1 pid i
  configure_mariadb && changed=0
  pid=$(my_pid)
  if [ -n "$pid" ] && [ "$changed" = 0 ]; then
    log "mariadb: configuration changed, restarting"
    stop_mariadb; pid=""
  fi
  if [ -z "$pid" ]; then
    port_open "$MY_PORT" && die "port $MY_PORT is taken by another process"
    setsid /usr/sbin/mariadbd --defaults-file="$MY_CNF" 9>&- </dev/null >>"$MY_RUN/mariadb.out" 2>&1 &
    wait_port "$MY_PORT" 60 || die "MariaDB did not open port $MY_PORT, see $MY_RUN/mariadb.log"
    for ((i = 0; i < 100; i++)); do [ -n "$(my_pid)" ] && break; sleep 0.1; done
    [ -n "$(my_pid)" ] || die "MariaDB wrote no pid file, see $MY_RUN/mariadb.log"
    log "mariadb: started on port $MY_PORT"
  fi
  my_sql <<EOF
CREATE DATABASE IF NOT EXISTS $BENCH_USER;
CREATE USER IF NOT EXISTS '$BENCH_USER'@'127.0.0.1' IDENTIFIED BY '$MY_PW';
ALTER USER '$BENCH_USER'@'127.0.0.1' IDENTIFIED BY '$MY_PW';
GRANT ALL ON $BENCH_USER.* TO '$BENCH_USER'@'127.0.0.1';
EOF
}

stop_mariadb() {
  local pid i; pid=$(my_pid)
  [ -n "$pid" ] || return 0
  log "stopping mariadb (pid $pid)"
  kill "$pid"
  for ((i = 0; i < 600; i++)); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  [ -d "/proc/$pid" ] && kill -KILL "$pid"
  rm -f "$MY_RUN/mariadb.pid"
}

my_version() { my_sql -e "SELECT VERSION()" 2>/dev/null | sed 's/-.*//' || true; }

# ---------------------------------------------------------------- Firebird benchmark databases

fb_env() { set -a; . "$STATE/servers.env"; set +a; }

fb_dsn() { # fb3|fb4 -> host/port:path of sbtest.fdb (after fb_env)
  local S=${1^^} host port dir
  host=FBW_${S}_HOST port=FBW_${S}_PORT dir=FBW_DBDIR_${S}
  echo "${!host}/${!port}:${!dir}/$FB_DB"
}

# sbtest.fdb on fb3 and fb4: page buffers in the database header (a per-database setting, so the
# shared servers' configuration stays as fb-servers.sh has it) and forced writes on.
start_fb() {
  [ -r "$STATE/servers.env" ] || die "no $STATE/servers.env: run scripts/fb-servers.sh start first"
  fb_env
  local s port dsn
  for s in fb3 fb4; do
    port=FBW_${s^^}_PORT dsn=$(fb_dsn "$s")
    port_open "${!port}" || die "$s does not listen on ${!port}: run scripts/fb-servers.sh start"
    if ! echo "QUIT;" | ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD isql-fb -q "$dsn" >/dev/null 2>&1; then
      log "creating $dsn"
      echo "CREATE DATABASE '$dsn' PAGE_SIZE 8192 DEFAULT CHARACTER SET UTF8;" |
        ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD isql-fb -q -b
    fi
    [ "$(fb_setting "$dsn" "MON\$PAGE_BUFFERS")" = "$FB_PAGE_BUFFERS" ] ||
      ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD gfix -buffers "$FB_PAGE_BUFFERS" "$dsn"
    [ "$(fb_setting "$dsn" "MON\$FORCED_WRITES")" = 1 ] ||
      ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD gfix -write sync "$dsn"
  done
}

fb_setting() { # dsn column -> value from MON$DATABASE
  printf 'SET HEADING OFF;\nSELECT %s FROM MON$DATABASE;\n' "$2" |
    ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD isql-fb -q "$1" 2>/dev/null | awk 'NF { print $1; exit }' || true
}

fb_status() {
  [ -r "$STATE/servers.env" ] || { echo "  fb       no $STATE/servers.env"; return 1; }
  fb_env
  local s port dsn rc=0 pb fw
  for s in fb3 fb4; do
    port=FBW_${s^^}_PORT dsn=$(fb_dsn "$s")
    pb=$(fb_setting "$dsn" "MON\$PAGE_BUFFERS"); fw=$(fb_setting "$dsn" "MON\$FORCED_WRITES")
    printf '  %-8s port %s  %s  page buffers %s  forced writes %s\n' "$s" "${!port}" "${dsn#*:}" \
      "${pb:-?}" "${fw:-?}"
    [ "$pb" = "$FB_PAGE_BUFFERS" ] && [ "$fw" = 1 ] || rc=1
  done
  return $rc
}

# ---------------------------------------------------------------- commands

write_env() {
  local tmp; tmp=$(mktemp)
  cat >"$tmp" <<EOF
# Written by scripts/peer-servers.sh start; source with \`set -a; . $ENV_FILE; set +a\`.
PEER_PG_HOST=127.0.0.1
PEER_PG_PORT=$PG_PORT
PEER_PG_USER=$BENCH_USER
PEER_PG_DB=$BENCH_USER
PEER_PG_PASSWORD=$PG_PW
PEER_PG_VERSION=$(pg_version)
PEER_PG_DATA=$PG_DATA
PEER_MARIADB_HOST=127.0.0.1
PEER_MARIADB_PORT=$MY_PORT
PEER_MARIADB_USER=$BENCH_USER
PEER_MARIADB_DB=$BENCH_USER
PEER_MARIADB_PASSWORD=$MY_PW
PEER_MARIADB_VERSION=$(my_version)
PEER_MARIADB_DATA=$MY_DATA
PEER_MARIADB_CNF=$MY_CNF
PEER_TLS_CERT=$TLS/server.crt
PEER_TLS_CLIENT_CERT=$TLS/client.crt
PEER_TLS_CLIENT_KEY=$TLS/client.key
PEER_FB_DB=$FB_DB
PEER_FB_PAGE_BUFFERS=$FB_PAGE_BUFFERS
EOF
  install -m 0600 "$tmp" "$ENV_FILE"
  rm -f "$tmp"
}

load_secrets() {
  PG_PW=$(secret "$SECRETS/pg-sbtest.password" 20)
  MY_PW=$(secret "$SECRETS/mariadb-sbtest.password" 20)
}

cmd_start() {
  [ "$(id -u)" -eq 0 ] || die "start must run as root"
  local t0=$SECONDS name names=("$@")
  [ "${#names[@]}" -gt 0 ] || names=("${INSTANCES[@]}")
  install -d -m 0755 "$STATE" "$PEERS"
  exec 9>"$STATE/.peers.lock"
  flock 9
  load_secrets
  ensure_packages
  install -d -m 0755 "$RUN"
  install -d -o postgres -g postgres -m 0755 "$PG_RUN"
  install -d -o mysql -g mysql -m 0755 "$MY_RUN"
  ensure_tls
  for name in "${names[@]}"; do
    case $name in
      pg) start_pg ;;
      mariadb) start_mariadb ;;
      fb) start_fb ;;
      *) die "unknown instance $name (pg, mariadb, fb)" ;;
    esac
  done
  write_env
  echo "peer servers ready in $((SECONDS - t0)) s:"
  cmd_status || true
  for name in "${names[@]}"; do
    case $name in
      pg) pg_running && port_open "$PG_PORT" || die "pg is not running" ;;
      mariadb) [ -n "$(my_pid)" ] && port_open "$MY_PORT" || die "mariadb is not running" ;;
    esac
  done
  echo "passwords: in $ENV_FILE (PEER_*_PASSWORD)"
}

cmd_stop() {
  [ "$(id -u)" -eq 0 ] || die "stop must run as root"
  [ -d "$PEERS" ] || return 0
  exec 9>"$STATE/.peers.lock"
  flock 9
  stop_pg
  stop_mariadb
}

cmd_status() {
  local rc=0
  if pg_running && port_open "$PG_PORT"; then
    printf '  %-8s port %s  version %s  data %s\n' pg "$PG_PORT" "$(pg_version)" "$PG_DATA"
  else
    printf '  %-8s port %s  stopped\n' pg "$PG_PORT"; rc=1
  fi
  if [ -n "$(my_pid)" ] && port_open "$MY_PORT"; then
    printf '  %-8s port %s  version %s  data %s\n' mariadb "$MY_PORT" "$(my_version)" "$MY_DATA"
  else
    printf '  %-8s port %s  stopped\n' mariadb "$MY_PORT"; rc=1
  fi
  fb_status || rc=1
  return $rc
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) [ -f "$ENV_FILE" ] || die "$ENV_FILE does not exist; run: $0 start"; cat "$ENV_FILE" ;;
  *) echo "usage: $0 start [pg|mariadb|fb ...] | stop | status | env" >&2; exit 2 ;;
esac
