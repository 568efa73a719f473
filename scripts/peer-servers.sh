#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# peer-servers.sh - the servers Firebird is compared with (tools/fbwire-compare), set up so that
# the comparison is fair: PostgreSQL 15 and MariaDB 10.11 from the Debian packages, each with its
# own data directory under the state dir, PostgreSQL 17 and MariaDB 11.8 from Debian 13 inside the
# FB4 chroot of scripts/fb-servers.sh, plus the benchmark databases on the Firebird servers of
# scripts/fb-servers.sh. "Peer" as in docs: the other engines a Firebird user compares with.
#
#   scripts/peer-servers.sh start [pg|mariadb|fb|pg17|mariadb118 ...] | stop [name...] | status | env
#
#   pg          PostgreSQL 15, 127.0.0.1:5433 (PEER_PG_PORT), user and database sbtest
#   mariadb     MariaDB 10.11, 127.0.0.1:3307 (PEER_MARIADB_PORT), user and database sbtest
#   fb          sbtest.fdb on fb3 (3050), fb4 (3051) and every registered fb<major> (fb5, fb6),
#               16384 page buffers, forced writes
#               (needs `scripts/fb-servers.sh start` first; that script owns the servers)
#   pg17        PostgreSQL 17 (Debian 13), 127.0.0.1:5434 (PEER_PG17_PORT), user and database sbtest
#   mariadb118  MariaDB 11.8 (Debian 13), 127.0.0.1:3308 (PEER_MARIADB118_PORT), likewise
#
# `start` without names starts all five. pg17 and mariadb118 cost about 25 s more the first time
# (apt installs them into the chroot: measured 21 s of download and unpacking, then 2 s of initdb
# and mariadb-install-db), a second or two afterwards, and two idle servers with 128 MB of buffer
# cache each: cheap enough to be part of every comparison's setup. They run inside
# <state>/fb4-chroot (`scripts/fb-servers.sh start fb4` makes it; its debootstrap and its apt use
# the mirror of this machine's apt configuration, scripts/lib/debian-mirror.sh), as the chroot's
# own postgres and mysql users, with their files under /var/lib/fbwire-peers of the chroot.
# The chroot's mounts (/proc, and a tmpfs on /dev/shm for PostgreSQL's shared memory) belong to
# fb-servers.sh: its `stop` stops these peers first and then unmounts them; our `stop` never
# unmounts, as the FB4 servers may still run in there. `stop NAME...` stops only those.
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
# State dir: $FBWIRE_STATE, default /var/tmp/fbwire-state (the same as fb-servers.sh).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
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
# PostgreSQL 17 and MariaDB 11.8 in the Debian 13 chroot; CH_* paths are as the chroot sees them
CHROOT=$STATE/fb4-chroot
CH_PEERS=/var/lib/fbwire-peers
CH_TLS=$CH_PEERS/tls
PG17_BIN=/usr/lib/postgresql/17/bin
PG17_DATA=$CH_PEERS/pg17
PG17_RUN=$CH_PEERS/run/pg17
PG17_PORT=${PEER_PG17_PORT:-5434}
M118_DIR=$CH_PEERS/mariadb118
M118_DATA=$M118_DIR/data
M118_CNF=$M118_DIR/my.cnf
M118_RUN=$CH_PEERS/run/mariadb118
M118_PORT=${PEER_MARIADB118_PORT:-3308}
CHROOT_PACKAGES=(postgresql-17 mariadb-server mariadb-client)
FB_DB=sbtest.fdb
FB_PAGE_BUFFERS=16384 # x 8 KB pages = 128 MB, the buffer cache every engine gets
BENCH_USER=sbtest
CHROOT_INSTANCES=(pg17 mariadb118)                 # in the Debian 13 chroot
INSTANCES=(pg mariadb fb "${CHROOT_INSTANCES[@]}") # what `start` without names starts

log() { printf '[peer-servers %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

die() { log "ERROR: $*"; exit 1; }

# port_open, wait_port, secret, write_if_changed
. "$REPO/scripts/servers-lib.sh"
# debian_mirror
. "$REPO/scripts/lib/debian-mirror.sh"
. "$REPO/scripts/lib/daemon.sh"

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
  pg_conf "$PG_PORT" "$PG_RUN" "$TLS/server.crt" "$TLS/pg.key" |
    write_if_changed "$PG_DATA/fbwire.conf" postgres 0600 && changed=0
  pg_hba | write_if_changed "$PG_DATA/pg_hba.conf" postgres 0600 && changed=0
  return $changed
}

# The settings of every PostgreSQL peer (15 and 17 alike): one text, so they cannot drift apart.
pg_conf() { # port socket-dir cert key
  cat <<EOF
# written by scripts/peer-servers.sh; reasons in docs/compare.md, "Settings"
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$2'
max_connections = 100
shared_buffers = 128MB
fsync = on
synchronous_commit = on
full_page_writes = on
password_encryption = 'scram-sha-256'
ssl = on
ssl_cert_file = '$3'
ssl_key_file = '$4'
EOF
}

pg_hba() {
  cat <<EOF
# written by scripts/peer-servers.sh: the superuser over the private socket, sbtest over TCP
local all postgres peer
host  all $BENCH_USER 127.0.0.1/32 scram-sha-256
EOF
}

pg_bench_sql() { # password: the sbtest role and database, on any PostgreSQL peer
  cat <<EOF
SELECT 'CREATE ROLE $BENCH_USER LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$BENCH_USER') \\gexec
ALTER ROLE $BENCH_USER LOGIN PASSWORD '$1';
SELECT 'CREATE DATABASE $BENCH_USER OWNER $BENCH_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$BENCH_USER') \\gexec
EOF
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
    # a session of its own (a server left in the caller's process group dies with it)
    (daemon_exec setsid -w runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_RUN/pg.log" -w -t 60 start) \
      >/dev/null || die "PostgreSQL did not start, see $PG_RUN/pg.log"
    log "pg: started on port $PG_PORT"
  fi
  wait_port "$PG_PORT" 30 || die "PostgreSQL does not listen on $PG_PORT"
  pg_bench_sql "$PG_PW" | pg_psql >/dev/null
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
  my_cnf "$MY_DATA" "$MY_PORT" "$MY_RUN" "$TLS/server.crt" "$TLS/mariadb.key" "$TLS/ca.pem" |
    write_if_changed "$MY_CNF" root 0644 && changed=0
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
    (daemon_exec setsid /usr/sbin/mariadbd --defaults-file="$MY_CNF") </dev/null >>"$MY_RUN/mariadb.out" 2>&1 &
    wait_port "$MY_PORT" 60 || die "MariaDB did not open port $MY_PORT, see $MY_RUN/mariadb.log"
    for ((i = 0; i < 100; i++)); do [ -n "$(my_pid)" ] && break; sleep 0.1; done
    [ -n "$(my_pid)" ] || die "MariaDB wrote no pid file, see $MY_RUN/mariadb.log"
    log "mariadb: started on port $MY_PORT"
  fi
  my_bench_sql "$MY_PW" | my_sql
}

# The settings of every MariaDB peer (10.11 and 11.8 alike): one text, so they cannot drift apart.
my_cnf() { # datadir port run-dir cert key ca
  cat <<EOF
# written by scripts/peer-servers.sh; reasons in docs/compare.md, "Settings". Read with
# --defaults-file, so nothing under /etc/mysql applies.
[mariadbd]
user = mysql
datadir = $1
port = $2
bind-address = 127.0.0.1
socket = $3/mariadb.sock
pid-file = $3/mariadb.pid
log-error = $3/mariadb.log
skip-name-resolve
max_connections = 200
innodb_buffer_pool_size = 128M
innodb_flush_log_at_trx_commit = 1
innodb_doublewrite = 1
skip-log-bin
ssl_cert = $4
ssl_key = $5
ssl_ca = $6
EOF
}

my_bench_sql() { # password: the sbtest user and database, on any MariaDB peer
  cat <<EOF
CREATE DATABASE IF NOT EXISTS $BENCH_USER;
CREATE USER IF NOT EXISTS '$BENCH_USER'@'127.0.0.1' IDENTIFIED BY '$1';
ALTER USER '$BENCH_USER'@'127.0.0.1' IDENTIFIED BY '$1';
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

# ---------------------------------------------------------------- PostgreSQL 17 and MariaDB 11.8

# They run in the Debian 13 chroot of fb-servers.sh, which is there for FB4 and has the newer
# packages; the chroot's /etc/passwd (not the host's) names their users.
ch_ids() { awk -F: -v u="$1" '$1 == u { print $3 ":" $4 }' "$CHROOT/etc/passwd"; }

ch_env=(/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C HOME=/tmp)

ch_root() { chroot "$CHROOT" "${ch_env[@]}" "$@"; }

ch_as() { # user command... : as the chroot's own user
  local ids; ids=$(ch_ids "$1")
  [ -n "$ids" ] || die "no user $1 in $CHROOT"
  chroot --userspec="$ids" "$CHROOT" "${ch_env[@]}" "${@:2}"
}

ch_installed() { # package -> 0 when installed in the chroot
  [ "$(chroot "$CHROOT" dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = installed ]
}

# /proc (as fb-servers.sh mounts it) and a tmpfs on /dev/shm: PostgreSQL's dynamic shared memory
# is POSIX shared memory there, as on the host, and debootstrap leaves a plain root-owned directory.
ch_mount() {
  mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
  if ! mountpoint -q "$CHROOT/dev" && ! mountpoint -q "$CHROOT/dev/shm"; then
    install -d -m 1777 "$CHROOT/dev/shm"
    mount -t tmpfs -o mode=1777,nosuid,nodev fbwire-shm "$CHROOT/dev/shm"
  fi
}

# postgresql-17 and mariadb-server in the chroot with its own apt, from the mirror this machine's
# apt uses (scripts/lib/debian-mirror.sh; debootstrap wrote the same line, written again here so
# that FBWIRE_DEBIAN_MIRROR applies to this install too). The Debian services never start:
# fb-servers.sh put a policy-rc.d there that refuses every start. Once per run of the script.
ensure_chroot() {
  [ -z "${CHROOT_CHECKED:-}" ] || return 0
  [ -f "$CHROOT/.fbwire-bootstrapped" ] ||
    die "no Debian 13 chroot at $CHROOT: run scripts/fb-servers.sh start fb4 first"
  [ -x "$CHROOT/usr/sbin/policy-rc.d" ] || die "$CHROOT has no policy-rc.d: run scripts/fb-servers.sh start fb4 first"
  local p missing=0 t0=$SECONDS
  ch_mount
  for p in "${CHROOT_PACKAGES[@]}"; do ch_installed "$p" || missing=1; done
  if [ "$missing" = 1 ]; then
    log "installing ${CHROOT_PACKAGES[*]} in the Debian 13 chroot (first run only)"
    echo "deb $(debian_mirror) trixie main" | write_if_changed "$CHROOT/etc/apt/sources.list" || true
    ch_root env DEBIAN_FRONTEND=noninteractive sh -c \
      'apt-get update -q && apt-get install -y -q --no-install-recommends "$@"' sh "${CHROOT_PACKAGES[@]}" \
      >"$STATE/peers-apt.log" 2>&1 || die "apt-get in the chroot failed, see $STATE/peers-apt.log"
    log "installed in $((SECONDS - t0)) s"
  fi
  [ -n "$(ch_ids postgres)" ] && [ -n "$(ch_ids mysql)" ] || die "no postgres or mysql user in $CHROOT"
  local pg my
  pg=$(ch_ids postgres) my=$(ch_ids mysql)
  install -d -m 0755 "$CHROOT$CH_PEERS" "$CHROOT$CH_PEERS/run" "$CHROOT$CH_TLS"
  install -d -o "${pg%:*}" -g "${pg#*:}" -m 0755 "$CHROOT$PG17_RUN"
  install -d -o "${my%:*}" -g "${my#*:}" -m 0755 "$CHROOT$M118_RUN"
  # the host's certificate and key (ensure_tls), so every peer shows the same certificate
  install -m 0644 "$TLS/server.crt" "$CHROOT$CH_TLS/server.crt"
  install -m 0644 "$TLS/ca.pem" "$CHROOT$CH_TLS/ca.pem"
  install -o "${pg%:*}" -g "${pg#*:}" -m 0600 "$TLS/server.key" "$CHROOT$CH_TLS/pg.key"
  install -o "${my%:*}" -g "${my#*:}" -m 0600 "$TLS/server.key" "$CHROOT$CH_TLS/mariadb.key"
  CHROOT_CHECKED=1
}

pg17_running() {
  [ -f "$CHROOT$PG17_DATA/postmaster.pid" ] && ch_as postgres "$PG17_BIN/pg_ctl" -D "$PG17_DATA" status >/dev/null 2>&1
}

pg17_psql() { # SQL on stdin, as the superuser over the private socket
  ch_as postgres "$PG17_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG17_RUN" -p "$PG17_PORT" -d postgres "$@"
}

configure_pg17() { # returns 0 when the server must be (re)started to see a change
  local changed=1 ids; ids=$(ch_ids postgres)
  if [ ! -f "$CHROOT$PG17_DATA/PG_VERSION" ]; then
    log "initdb $CHROOT$PG17_DATA"
    install -d -o "${ids%:*}" -g "${ids#*:}" -m 0700 "$CHROOT$PG17_DATA"
    ch_as postgres "$PG17_BIN/initdb" -D "$PG17_DATA" -U postgres -E UTF8 --locale=C --auth-local=peer \
      --auth-host=scram-sha-256 >"$CHROOT$PG17_RUN/pg-initdb.log" 2>&1 ||
      die "initdb failed, see $CHROOT$PG17_RUN/pg-initdb.log"
    echo "include 'fbwire.conf'" >>"$CHROOT$PG17_DATA/postgresql.conf"
    changed=0
  fi
  pg_conf "$PG17_PORT" "$PG17_RUN" "$CH_TLS/server.crt" "$CH_TLS/pg.key" |
    write_if_changed "$CHROOT$PG17_DATA/fbwire.conf" "${ids%:*}" 0600 && changed=0
  pg_hba | write_if_changed "$CHROOT$PG17_DATA/pg_hba.conf" "${ids%:*}" 0600 && changed=0
  return $changed
}

start_pg17() {
  local changed=1
  ensure_chroot
  configure_pg17 && changed=0
  if pg17_running && [ "$changed" = 0 ]; then
    log "pg17: configuration changed, restarting"
    ch_as postgres "$PG17_BIN/pg_ctl" -D "$PG17_DATA" -m fast -w stop >/dev/null
  fi
  if ! pg17_running; then
    port_open "$PG17_PORT" && die "port $PG17_PORT is taken by another process"
    (daemon_exec setsid -w chroot --userspec="$(ch_ids postgres)" "$CHROOT" "${ch_env[@]}" "$PG17_BIN/pg_ctl" \
      -D "$PG17_DATA" -l "$PG17_RUN/pg.log" -w -t 60 start) </dev/null >/dev/null ||
      die "PostgreSQL 17 did not start, see $CHROOT$PG17_RUN/pg.log"
    log "pg17: started on port $PG17_PORT"
  fi
  wait_port "$PG17_PORT" 30 || die "PostgreSQL 17 does not listen on $PG17_PORT"
  pg_bench_sql "$PG17_PW" | pg17_psql >/dev/null
}

stop_pg17() {
  [ -d "$CHROOT$PG17_DATA" ] && pg17_running || return 0
  log "stopping pg17"
  ch_as postgres "$PG17_BIN/pg_ctl" -D "$PG17_DATA" -m fast -w -t 60 stop >/dev/null
}

pg17_version() {
  [ -d "$CHROOT$PG17_DATA" ] || return 0
  pg17_psql -At -c "SHOW server_version" 2>/dev/null | awk '{ print $1 }' || true
}

m118_pid() { # the running server's pid, or nothing
  local pid; pid=$(tr -dc 0-9 2>/dev/null <"$CHROOT$M118_RUN/mariadb.pid" || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] && echo "$pid" || true
}

m118_sql() { # SQL on stdin, as root over the private socket (unix_socket authentication)
  ch_root mariadb --no-defaults -uroot --socket="$M118_RUN/mariadb.sock" -N -B "$@"
}

configure_mariadb118() { # returns 0 when the server must be (re)started to see a change
  local changed=1 ids; ids=$(ch_ids mysql)
  install -d -o "${ids%:*}" -g "${ids#*:}" -m 0750 "$CHROOT$M118_DIR"
  my_cnf "$M118_DATA" "$M118_PORT" "$M118_RUN" "$CH_TLS/server.crt" "$CH_TLS/mariadb.key" "$CH_TLS/ca.pem" |
    write_if_changed "$CHROOT$M118_CNF" root 0644 && changed=0
  if [ ! -d "$CHROOT$M118_DATA/mysql" ]; then
    log "mariadb-install-db $CHROOT$M118_DATA"
    rm -rf --one-file-system "$CHROOT$M118_DATA"
    install -d -o "${ids%:*}" -g "${ids#*:}" -m 0750 "$CHROOT$M118_DATA"
    ch_root mariadb-install-db --defaults-file="$M118_CNF" --user=mysql \
      --auth-root-authentication-method=socket --skip-test-db >"$CHROOT$M118_RUN/mariadb-install.log" 2>&1 ||
      die "mariadb-install-db failed, see $CHROOT$M118_RUN/mariadb-install.log"
    changed=0
  fi
  return $changed
}

start_mariadb118() {
  local changed=1 pid i
  ensure_chroot
  configure_mariadb118 && changed=0
  pid=$(m118_pid)
  if [ -n "$pid" ] && [ "$changed" = 0 ]; then
    log "mariadb118: configuration changed, restarting"
    stop_mariadb118; pid=""
  fi
  if [ -z "$pid" ]; then
    port_open "$M118_PORT" && die "port $M118_PORT is taken by another process"
    (daemon_exec setsid chroot --userspec="$(ch_ids mysql)" "$CHROOT" "${ch_env[@]}" /usr/sbin/mariadbd \
      --defaults-file="$M118_CNF") </dev/null >>"$CHROOT$M118_RUN/mariadb.out" 2>&1 &
    wait_port "$M118_PORT" 60 || die "MariaDB 11.8 did not open port $M118_PORT, see $CHROOT$M118_RUN/mariadb.log"
    for ((i = 0; i < 100; i++)); do [ -n "$(m118_pid)" ] && break; sleep 0.1; done
    [ -n "$(m118_pid)" ] || die "MariaDB 11.8 wrote no pid file, see $CHROOT$M118_RUN/mariadb.log"
    log "mariadb118: started on port $M118_PORT"
  fi
  my_bench_sql "$M118_PW" | m118_sql
}

stop_mariadb118() {
  local pid i; pid=$(m118_pid)
  [ -n "$pid" ] || return 0
  log "stopping mariadb118 (pid $pid)"
  kill "$pid"
  for ((i = 0; i < 600; i++)); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  [ -d "/proc/$pid" ] && kill -KILL "$pid"
  rm -f "$CHROOT$M118_RUN/mariadb.pid"
}

m118_version() {
  [ -n "$(m118_pid)" ] || return 0
  m118_sql -e "SELECT VERSION()" 2>/dev/null | sed 's/-.*//' || true
}

# ---------------------------------------------------------------- Firebird benchmark databases

fb_env() { set -a; . "$STATE/servers.env"; set +a; }

fb_dsn() { # fb3|fb4|fbN -> host/port:path of sbtest.fdb (after fb_env)
  local S=${1^^} host port dir
  host=FBW_${S}_HOST port=FBW_${S}_PORT dir=FBW_DBDIR_${S}
  echo "${!host}/${!port}:${!dir}/$FB_DB"
}

# The Firebird engines with a benchmark database: fb3 and fb4, and every other fb<major> registered
# in servers.env (fb5, fb6: scripts/fb-servers.sh start-install or register). The test variants
# (fb3l, fb3s, fb4s, ...) are not engines of the comparison.
fb_engines() {
  echo fb3 fb4
  sed -n 's/^FBW_\(FB[0-9][0-9]*\)_PORT=.*/\1/p' "$STATE/servers.env" | tr 'A-Z' 'a-z' | grep -vx -e fb3 -e fb4 || true
}

# sbtest.fdb on every Firebird engine: page buffers in the database header (a per-database setting,
# so the shared servers' configuration stays as fb-servers.sh has it) and forced writes on.
start_fb() {
  [ -r "$STATE/servers.env" ] || die "no $STATE/servers.env: run scripts/fb-servers.sh start first"
  fb_env
  local s port dsn
  for s in $(fb_engines); do
    port=FBW_${s^^}_PORT dsn=$(fb_dsn "$s")
    if ! port_open "${!port}"; then
      case $s in
        fb3|fb4) die "$s does not listen on ${!port}: run scripts/fb-servers.sh start" ;;
        *) log "$s is registered but does not listen on ${!port}: no benchmark database there (start it)"
           continue ;;
      esac
    fi
    if ! echo "QUIT;" | fb_as "$s" isql-fb -q "$dsn" >/dev/null 2>&1; then
      log "creating $dsn"
      echo "CREATE DATABASE '$dsn' PAGE_SIZE 8192 DEFAULT CHARACTER SET UTF8;" | fb_as "$s" isql-fb -q -b
    fi
    [ "$(fb_setting "$s" "$dsn" "MON\$PAGE_BUFFERS")" = "$FB_PAGE_BUFFERS" ] ||
      fb_as "$s" gfix -buffers "$FB_PAGE_BUFFERS" "$dsn"
    [ "$(fb_setting "$s" "$dsn" "MON\$FORCED_WRITES")" = 1 ] || fb_as "$s" gfix -write sync "$dsn"
  done
}

# engine command...: run it with the engine's login (a registered server's FBW_<E>_USER and
# FBW_<E>_PASSWORD, else the test servers' SYSDBA), passed in the environment only.
fb_as() {
  local S=${1^^} u p; shift
  u=FBW_${S}_USER p=FBW_${S}_PASSWORD
  ISC_USER=${!u:-$FBW_USER} ISC_PASSWORD=${!p:-$FBW_PASSWORD} "$@"
}

fb_setting() { # engine dsn column -> value from MON$DATABASE
  printf 'SET HEADING OFF;\nSELECT %s FROM MON$DATABASE;\n' "$3" |
    fb_as "$1" isql-fb -q "$2" 2>/dev/null | awk 'NF { print $1; exit }' || true
}

fb_status() {
  [ -r "$STATE/servers.env" ] || { echo "  fb         no $STATE/servers.env"; return 1; }
  fb_env
  local s port dsn rc=0 pb fw
  for s in $(fb_engines); do
    port=FBW_${s^^}_PORT dsn=$(fb_dsn "$s")
    pb=$(fb_setting "$s" "$dsn" "MON\$PAGE_BUFFERS"); fw=$(fb_setting "$s" "$dsn" "MON\$FORCED_WRITES")
    printf '  %-10s port %s  %s  page buffers %s  forced writes %s\n' "$s" "${!port}" "${dsn#*:}" \
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
PEER_PG17_HOST=127.0.0.1
PEER_PG17_PORT=$PG17_PORT
PEER_PG17_USER=$BENCH_USER
PEER_PG17_DB=$BENCH_USER
PEER_PG17_PASSWORD=$PG17_PW
PEER_PG17_VERSION=$(pg17_version)
PEER_PG17_DATA=$CHROOT$PG17_DATA
PEER_MARIADB118_HOST=127.0.0.1
PEER_MARIADB118_PORT=$M118_PORT
PEER_MARIADB118_USER=$BENCH_USER
PEER_MARIADB118_DB=$BENCH_USER
PEER_MARIADB118_PASSWORD=$M118_PW
PEER_MARIADB118_VERSION=$(m118_version)
PEER_MARIADB118_DATA=$CHROOT$M118_DATA
PEER_MARIADB118_CNF=$CHROOT$M118_CNF
PEER_CHROOT=$CHROOT
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
  PG17_PW=$(secret "$SECRETS/pg17-sbtest.password" 20)
  M118_PW=$(secret "$SECRETS/mariadb118-sbtest.password" 20)
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
      pg17) start_pg17 ;;
      mariadb118) start_mariadb118 ;;
      *) die "unknown instance $name (pg, mariadb, fb, pg17, mariadb118)" ;;
    esac
  done
  write_env
  echo "peer servers ready in $((SECONDS - t0)) s:"
  cmd_status || true
  for name in "${names[@]}"; do
    case $name in
      pg) pg_running && port_open "$PG_PORT" || die "pg is not running" ;;
      mariadb) [ -n "$(my_pid)" ] && port_open "$MY_PORT" || die "mariadb is not running" ;;
      pg17) pg17_running && port_open "$PG17_PORT" || die "pg17 is not running" ;;
      mariadb118) [ -n "$(m118_pid)" ] && port_open "$M118_PORT" || die "mariadb118 is not running" ;;
    esac
  done
  echo "passwords: in $ENV_FILE (PEER_*_PASSWORD)"
}

cmd_stop() { # [name...]: all peers by default; never unmounts the chroot (see the header)
  [ "$(id -u)" -eq 0 ] || die "stop must run as root"
  local name names=("$@")
  [ "${#names[@]}" -gt 0 ] || names=(pg mariadb "${CHROOT_INSTANCES[@]}")
  for name in "${names[@]}"; do  # every name checked before anything stops
    case $name in pg | mariadb | pg17 | mariadb118 | fb) ;; *) die "unknown instance $name (pg, mariadb, pg17, mariadb118)" ;; esac
  done
  [ -d "$PEERS" ] || return 0
  exec 9>"$STATE/.peers.lock"
  flock 9
  for name in "${names[@]}"; do
    case $name in
      pg) stop_pg ;;
      mariadb) stop_mariadb ;;
      pg17) stop_pg17 ;;
      mariadb118) stop_mariadb118 ;;
      fb) ;;  # the Firebird servers are fb-servers.sh's
    esac
  done
}

cmd_status() {
  local rc=0
  if pg_running && port_open "$PG_PORT"; then
    printf '  %-10s port %s  version %s  data %s\n' pg "$PG_PORT" "$(pg_version)" "$PG_DATA"
  else
    printf '  %-10s port %s  stopped\n' pg "$PG_PORT"; rc=1
  fi
  if [ -n "$(my_pid)" ] && port_open "$MY_PORT"; then
    printf '  %-10s port %s  version %s  data %s\n' mariadb "$MY_PORT" "$(my_version)" "$MY_DATA"
  else
    printf '  %-10s port %s  stopped\n' mariadb "$MY_PORT"; rc=1
  fi
  # the chroot's peers are opt-in: listed once set up, and then they count like the others
  if [ -f "$CHROOT$PG17_DATA/PG_VERSION" ]; then
    if pg17_running && port_open "$PG17_PORT"; then
      printf '  %-10s port %s  version %s  data %s\n' pg17 "$PG17_PORT" "$(pg17_version)" "$CHROOT$PG17_DATA"
    else
      printf '  %-10s port %s  stopped\n' pg17 "$PG17_PORT"; rc=1
    fi
  fi
  if [ -d "$CHROOT$M118_DATA/mysql" ]; then
    if [ -n "$(m118_pid)" ] && port_open "$M118_PORT"; then
      printf '  %-10s port %s  version %s  data %s\n' mariadb118 "$M118_PORT" "$(m118_version)" "$CHROOT$M118_DATA"
    else
      printf '  %-10s port %s  stopped\n' mariadb118 "$M118_PORT"; rc=1
    fi
  fi
  fb_status || rc=1
  return $rc
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) cmd_status ;;
  env) [ -f "$ENV_FILE" ] || die "$ENV_FILE does not exist; run: $0 start"; cat "$ENV_FILE" ;;
  *) echo "usage: $0 start [pg|mariadb|fb|pg17|mariadb118 ...] | stop [name...] | status | env" >&2; exit 2 ;;
esac
