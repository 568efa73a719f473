#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fb-servers.sh - the real Firebird servers the fbwire integration tests talk to.
#
#   scripts/fb-servers.sh start [instance...] | stop | status | env
#   scripts/fb-servers.sh start-install NAME DIR
#   scripts/fb-servers.sh register NAME HOST/PORT DBDIR USER PASSWORD-FILE [HOSTDIR]
#   scripts/fb-servers.sh unregister NAME
#
# Instances (all on 127.0.0.1, all with WireCrypt = Enabled unless noted, so plain captures work):
#   fb3   3050  Debian 12 firebird3.0-server, started with fbguard; AuthServer = Srp256, Srp
#   fb4   3051  Debian 13 firebird4.0-server inside a debootstrap chroot (<state>/fb4-chroot)
#   fb3l  3052  second FB3 process with its own root dir: Srp256, Srp, Legacy_Auth (+ LEGACYUSER)
#   fb3r  3053  third FB3 process, WireCrypt = Required
#   fb3s  3054  stock FB3: the package's firebird.conf untouched (WireCrypt = Required,
#               AuthServer = Srp), port given with `firebird -p`
#   fb4s  3055  stock FB4 in the fb4 chroot, likewise (WireCrypt = Required, AuthServer = Srp256)
# The stock instances run the package's binaries in a private mount namespace that shows them a
# pristine copy of the package's firebird.conf (checked against dpkg's checksum) and a security
# database directory of their own: two SuperServer processes cannot share one security database.
# `start` installs, configures, starts, waits for the ports and creates the test database and
# users; every step checks before it acts, so a second `start` only verifies. It does not touch
# anything outside <state> except what the Debian packages install (and their config files).
# State dir: $FBWIRE_STATE, default /var/tmp/fbwire-state (outside the checkout: the FB4 chroot
# there has /proc mounted, and every checkout shares the servers); user firebird must reach it.
# Runs as root (apt, chroot, runuser). Never `rm -rf` the state dir while fb4 runs: `stop` first
# unmounts the chroot's /proc.
#
# Any other Firebird (NAME is fb5, fb6, ...: "fb" and the major version, a suffix allowed) joins
# the test servers by registration, kept in <state>/registered/NAME.conf (fb-servers-registry.sh):
#   start-install NAME DIR  a test instance of the Firebird installed in DIR (an official tarball
#       install, or a source build's gen/Release/firebird): its root <state>/NAME links DIR's files
#       but holds its own copy of DIR's firebird.conf (only the port and the settings every test
#       instance has are changed), its own copy of DIR's security database and its lock dir.
#       Runs DIR/bin/firebird as user firebird on the first free port from 3060. `start`
#       restarts it, `stop` stops it; DIR itself is never written.
#   register NAME HOST/PORT DBDIR USER PASSWORD-FILE  a server already running elsewhere: USER
#       (an administrator) and the password read from PASSWORD-FILE, copied to <state>/secrets;
#       it creates DBDIR/fbwire_test.fdb and the test users there if they are missing. HOSTDIR:
#       DBDIR as this machine sees it when the server runs in a chroot or container.
#   unregister NAME  stops an installation's instance and forgets either kind (files stay).
# servers.env then has FBW_<NAME>_HOST/_PORT/_DB/_VERSION and FBW_DBDIR_<NAME> (and, registered,
# FBW_<NAME>_USER/_PASSWORD, with HOSTDIR FBW_DBDIR_<NAME>_HOST); tests/support/on-server.sh runs
# each server test against it.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
ENV_FILE=$STATE/servers.env
RUN=$STATE/run
SECRETS=$STATE/secrets
CHROOT=$STATE/fb4-chroot

FB3_ETC=/etc/firebird/3.0
FB3_LIB=/usr/lib/x86_64-linux-gnu/firebird/3.0
FB3_SECDB=/var/lib/firebird/3.0/system/security3.fdb
FB3_RUNDIR=/run/firebird3.0
FB3_PIDFILE=$FB3_RUNDIR/firebird.pid   # the same file the package's init script uses
FB4_ETC=/etc/firebird/4.0               # paths inside the chroot
FB4_SECDB=/var/lib/firebird/4.0/system/security4.fdb
FB4_DBDIR=/var/lib/firebird/fbwire

PORT_BASE=${FBWIRE_PORT_BASE:-3050}  # only to run a second, separate set (e.g. in a test chroot)
PORT_fb3=$PORT_BASE PORT_fb4=$((PORT_BASE + 1)) PORT_fb3l=$((PORT_BASE + 2)) PORT_fb3r=$((PORT_BASE + 3))
PORT_fb3s=$((PORT_BASE + 4)) PORT_fb4s=$((PORT_BASE + 5))
FB4S_DBDIR=/var/lib/firebird/fbwire-stock   # inside the chroot
TEST_DB=fbwire_test.fdb
LEGACY_USER=LEGACYUSER
INSTANCES=(fb3 fb4 fb3l fb3r fb3s fb4s)

log() { printf '[fb-servers %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib/debian-mirror.sh
. "$REPO/scripts/lib/debian-mirror.sh"

# ---------------------------------------------------------------- small helpers

# port_open, wait_port, secret, write_if_changed
. "$REPO/scripts/servers-lib.sh"
# registered servers: reg_*, install_* (start-install, register, unregister)
. "$REPO/scripts/fb-servers-registry.sh"

pid_alive() { [ -n "$1" ] && [ -d "/proc/$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

read_pid() { [ -f "$1" ] && tr -dc 0-9 <"$1" || true; }

# Rewrite a Firebird .conf so that the given "Key = Value" pairs are in force exactly once, inside
# a marked block at the end; other uncommented lines with those keys are dropped (Firebird does
# not define which duplicate wins). Writes only when the content changes; returns 0 if it did.
conf_apply() { # file "Key = Value"...
  local file=$1; shift
  local keys="" kv tmp
  for kv in "$@"; do keys+="${kv%% =*}|"; done
  tmp=$(mktemp)
  awk -v keys="${keys%|}" '
    BEGIN { n = split(tolower(keys), k, "|"); for (i = 1; i <= n; i++) skip[k[i]] = 1 }
    /^# >>> fbwire/ { inblock = 1; next }
    /^# <<< fbwire/ { inblock = 0; next }
    inblock { next }
    /^[ \t]*[A-Za-z]/ { key = $0; sub(/[ \t]*=.*/, "", key); sub(/^[ \t]*/, "", key)
                        if (tolower(key) in skip) next }
    { print }' "$file" >"$tmp"
  {
    echo "# >>> fbwire: managed by scripts/fb-servers.sh"
    printf '%s\n' "$@"
    echo "# <<< fbwire"
  } >>"$tmp"
  if cmp -s "$tmp" "$file"; then rm -f "$tmp"; return 1; fi
  cat "$tmp" >"$file"   # keeps owner and mode of the original
  rm -f "$tmp"
  log "updated $file"
  return 0
}

# Remote isql as SYSDBA through the host's FB3 client; the password travels in the environment,
# never on a command line. Extra isql options may follow the connection string. A hung server
# must not hang us: isql ends after ISQL_TIMEOUT seconds (default 300, for creating databases).
isql_remote() { # port db [isql args...]  (SQL on stdin)
  local port=$1 db=$2; shift 2
  ISC_USER=${LOGIN_USER:-SYSDBA} ISC_PASSWORD=${LOGIN_PW:-$SYSDBA_PW} \
    timeout -k 5 "${ISQL_TIMEOUT:-300}" isql-fb -q -b "$@" "${SQL_HOST:-127.0.0.1}/$port:$db"
}

sql_value() { # port db expression  (nothing when the server does not answer within 30 s)
  printf 'SET HEADING OFF;\nSELECT %s FROM rdb$database;\n' "$3" |
    ISQL_TIMEOUT=30 isql_remote "$1" "$2" 2>/dev/null | awk 'NF { print $1; exit }' || true
}

# ---------------------------------------------------------------- installation

ensure_host_packages() {
  local need=0 p
  for p in firebird3.0-server firebird3.0-utils debootstrap; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || need=1
  done
  [ "$need" = 0 ] && return 0
  # Pre-answer the package's password question; the script enforces its own password anyway.
  printf 'firebird3.0-server shared/firebird/sysdba_password/first_install password %s\n' \
    "$SYSDBA_PW" | debconf-set-selections
  "$REPO/scripts/install-deps.sh" firebird3.0-server firebird3.0-utils debootstrap
  getent passwd firebird >/dev/null || die "package install did not create user firebird"
}

# The chroot's own firebird uid:gid (it need not match the host's).
chroot_fb_ids() { awk -F: '$1 == "firebird" { print $3 ":" $4 }' "$CHROOT/etc/passwd"; }

chroot_mount() {
  mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
  # debootstrap normally creates device nodes; where it could not (containers), borrow the host's.
  if [ ! -c "$CHROOT/dev/null" ] || [ ! -c "$CHROOT/dev/urandom" ]; then
    mountpoint -q "$CHROOT/dev" || mount --bind /dev "$CHROOT/dev"
  fi
}

chroot_umount() {
  local m
  [ -d "$CHROOT" ] || return 0
  # deepest first; /proc/mounts escapes spaces, which our paths do not contain
  for m in $(awk -v root="$CHROOT" 'index($2, root "/") == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" || umount -l "$m"
  done
}

ensure_fb4_chroot() {
  [ -f "$CHROOT/.fbwire-ready" ] && return 0
  local t0=$SECONDS mirror
  mirror=$(debian_mirror)
  if [ ! -f "$CHROOT/.fbwire-bootstrapped" ]; then
    if [ -e "$CHROOT" ]; then  # a half-finished earlier attempt: start over, mounts first
      chroot_umount
      if awk -v root="$CHROOT" 'index($2, root "/") == 1 { f = 1 } END { exit !f }' /proc/mounts; then
        die "$CHROOT still has mounts; not removing it"
      fi
      rm -rf --one-file-system "$CHROOT"
    fi
    log "debootstrap --variant=minbase trixie from $mirror (first run only; 20-60 s on a fast mirror)"
    debootstrap --variant=minbase trixie "$CHROOT" "$mirror" >"$STATE/debootstrap.log" 2>&1 ||
      die "debootstrap failed, see $STATE/debootstrap.log"
    touch "$CHROOT/.fbwire-bootstrapped"
  fi
  # Services must not start during package configuration inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$CHROOT/usr/sbin/policy-rc.d"
  chmod 0755 "$CHROOT/usr/sbin/policy-rc.d"
  chroot_mount
  log "installing firebird4.0-server in the chroot"
  chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends firebird4.0-server firebird4.0-utils' \
    >"$STATE/fb4-apt.log" 2>&1 || die "apt-get in the chroot failed, see $STATE/fb4-apt.log"
  touch "$CHROOT/.fbwire-ready"
  log "fb4 chroot ready in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- configuration

common_conf=("WireCrypt = Enabled" "AuthServer = Srp256, Srp" "UserManager = Srp")

# Returns 0 when a config file changed (a running server must be restarted to see it).
configure_fb3() {
  conf_apply "$FB3_ETC/firebird.conf" "${common_conf[@]}" "RemoteServicePort = $PORT_fb3"
}

# fb3l / fb3r: a private FIREBIRD root dir holding the config, messages, security database and
# lock dir. Debian's build fixes the plugin, intl and guardian dirs at compile time; only the
# config and message dirs follow $FIREBIRD, which is all a second instance needs.
configure_fb3_instance() { # name port "Key = Value"...
  local name=$1 port=$2; shift 2
  local root=$STATE/$name changed=1
  # owned by firebird: the server and embedded isql create the security database and locks here
  install -d -o firebird -g firebird -m 0755 "$root"
  install -d -o firebird -g firebird -m 0770 "$root/lock"
  # Everything else the server looks up under its root (messages, intl, plugins, UDF) is the
  # package's: link it, so only the config and the security database are private. The intl
  # module is the exception: loaded through a symlink, its character sets stay undefined
  # ("CHARACTER SET WIN1252 is not defined"), so intl/ holds copies.
  local entry
  [ -L "$root/intl" ] && rm -f "$root/intl"
  install -d -m 0755 "$root/intl"
  for entry in "$FB3_LIB"/intl/*; do
    write_if_changed "$root/intl/${entry##*/}" <"$entry" && changed=0
  done
  for entry in "$FB3_LIB"/*; do
    case $entry in *.conf | */intl) continue ;; esac
    if [ "$(readlink "$root/${entry##*/}" 2>/dev/null)" != "$entry" ]; then
      ln -sfn "$entry" "$root/${entry##*/}"
      changed=0
    fi
  done
  [ -f "$root/firebird.conf" ] || install -m 0644 "$FB3_ETC/firebird.conf" "$root/firebird.conf"
  local f
  for f in plugins.conf fbtrace.conf; do
    write_if_changed "$root/$f" <"$FB3_ETC/$f" && changed=0
  done
  write_if_changed "$root/databases.conf" <<EOF && changed=0
# written by scripts/fb-servers.sh for the $name instance
security.db = $root/security3.fdb
{
	RemoteAccess = false
	DefaultDbCachePages = 50
}
EOF
  conf_apply "$root/firebird.conf" "$@" "RemoteServicePort = $port" \
    "SecurityDatabase = $root/security3.fdb" && changed=0
  if [ ! -f "$root/security3.fdb" ]; then
    log "creating security database for $name"
    local tmp=$root/security3.fdb.new
    rm -f "$tmp"
    printf "CREATE DATABASE '%s';\n" "$tmp" | fb3_embedded "$name" -q
    fb3_embedded "$name" -q -user SYSDBA -i /usr/share/firebird/3.0/security.sql "$tmp" >/dev/null
    mv "$tmp" "$root/security3.fdb"
    changed=0
  fi
  return $changed
}

configure_fb4() {
  local conf=$CHROOT$FB4_ETC/firebird.conf changed=1
  conf_apply "$conf" "${common_conf[@]}" "RemoteServicePort = $PORT_fb4" && changed=0
  # The server resolves RemoteBindAddress = localhost through the chroot's own /etc/hosts.
  grep -qE '^127\.0\.0\.1[[:space:]].*\blocalhost\b' "$CHROOT/etc/hosts" 2>/dev/null ||
    echo "127.0.0.1 localhost" >>"$CHROOT/etc/hosts"
  chmod 1777 "$CHROOT/tmp"
  local ids; ids=$(chroot_fb_ids)
  [ -n "$ids" ] || die "no firebird user in the chroot"
  install -d -o "${ids%:*}" -g "${ids#*:}" -m 0770 "$CHROOT/tmp/firebird" "$CHROOT$FB4_DBDIR"
  return $changed
}

# fb3s / fb4s: <state>/<name>/firebird.conf is the package's firebird.conf as shipped. The host's
# and the chroot's copies carry our managed block; without it they must match dpkg's checksum.
pristine_conf() { # name
  local name=$1 conf pkg root=$STATE/$1 want tmp
  case $name in
    fb3s) conf=$FB3_ETC/firebird.conf
          want=$(dpkg-query -W -f='${Conffiles}\n' firebird3.0-common | awk -v f="$conf" '$1 == f { print $2 }') ;;
    fb4s) conf=$CHROOT$FB4_ETC/firebird.conf
          want=$(chroot "$CHROOT" dpkg-query -W -f='${Conffiles}\n' firebird4.0-common |
                   awk -v f="$FB4_ETC/firebird.conf" '$1 == f { print $2 }') ;;
  esac
  tmp=$(mktemp)
  awk '/^# >>> fbwire/ { b = 1; next } /^# <<< fbwire/ { b = 0; next } !b' "$conf" >"$tmp"
  [ "$(md5sum <"$tmp" | cut -d' ' -f1)" = "$want" ] ||
    { rm -f "$tmp"; die "$conf without the fbwire block is not the package's file (md5 $want)"; }
  install -d -m 0755 "$root"
  local rc=1
  write_if_changed "$root/firebird.conf" <"$tmp" && rc=0
  rm -f "$tmp"
  return $rc
}

# The command prefix (array NS) that runs a command in a private mount namespace where the
# package's firebird.conf is the pristine copy and the security database directory is the
# instance's own. Nothing else differs. An array, not a function, so setsid can exec it.
stock_ns() { # name
  local conf sysdir
  case $1 in
    fb3s) conf=$FB3_ETC/firebird.conf sysdir=${FB3_SECDB%/*} ;;
    fb4s) conf=$CHROOT$FB4_ETC/firebird.conf sysdir=$CHROOT${FB4_SECDB%/*} ;;
  esac
  # shellcheck disable=SC2016
  NS=(unshare --mount --propagation private /bin/sh -c
      'mount --bind "$1" "$2" && mount --bind "$3" "$4" && shift 4 && exec "$@"'
      sh "$STATE/$1/firebird.conf" "$conf" "$STATE/$1/system" "$sysdir")
}

stock_embedded() { # name isql-args...
  local name=$1; shift
  stock_ns "$name"
  if [ "$name" = fb3s ]; then
    "${NS[@]}" runuser -u firebird -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
      FIREBIRD_LOCK="$STATE/fb3s/lock" isql-fb "$@"
  else
    "${NS[@]}" chroot --userspec="$(chroot_fb_ids)" "$CHROOT" /usr/bin/env -i \
      PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C HOME=/tmp FIREBIRD_LOCK=/tmp/firebird-fb4s isql-fb "$@"
  fi
}

# Returns 0 when something changed. The security database is created from the package's
# security.sql, as the package's postinst does.
configure_stock() { # name
  local name=$1 root=$STATE/$1 changed=1 owner secdb sql
  pristine_conf "$name" && changed=0
  if [ "$name" = fb3s ]; then
    owner=firebird:firebird secdb=$FB3_SECDB sql=/usr/share/firebird/3.0/security.sql
    install -d -o firebird -g firebird -m 0770 "$root/lock"
  else
    owner=$(chroot_fb_ids) secdb=$FB4_SECDB sql=/usr/share/firebird/4.0/security.sql
    install -d -o "${owner%:*}" -g "${owner#*:}" -m 0770 "$CHROOT$FB4S_DBDIR"
  fi
  install -d -o "${owner%:*}" -g "${owner#*:}" -m 0770 "$root/system"
  if [ ! -f "$root/system/${secdb##*/}" ]; then
    log "creating the security database of $name"
    printf "CREATE DATABASE '%s';\n" "$secdb" | stock_embedded "$name" -q
    stock_embedded "$name" -q -user SYSDBA -i "$sql" "$secdb" >/dev/null
    changed=0
  fi
  return $changed
}

# ---------------------------------------------------------------- embedded access (server stopped)

# Embedded isql as the firebird user (never root: lock files must stay usable by the server).
fb3_embedded() { # instance isql-args...
  local name=$1; shift
  local envs=(PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C)
  if [ "$name" != fb3 ]; then
    envs+=(FIREBIRD="$STATE/$name" FIREBIRD_LOCK="$STATE/$name/lock")
  fi
  runuser -u firebird -- /usr/bin/env -i "${envs[@]}" isql-fb "$@"
}

fb4_embedded() {
  chroot --userspec="$(chroot_fb_ids)" "$CHROOT" /usr/bin/env -i \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C HOME=/tmp isql-fb "$@"
}

set_sysdba_embedded() { # instance
  local sql="CREATE OR ALTER USER SYSDBA PASSWORD '$SYSDBA_PW' USING PLUGIN Srp;"
  case $1 in
    fb3) echo "$sql" | fb3_embedded fb3 -q -b -user SYSDBA "$FB3_SECDB" ;;
    fb3l | fb3r) echo "$sql" | fb3_embedded "$1" -q -b -user SYSDBA "$STATE/$1/security3.fdb" ;;
    fb4) echo "$sql" | fb4_embedded -q -b -user SYSDBA "$FB4_SECDB" ;;
    fb3s) echo "$sql" | stock_embedded fb3s -q -b -user SYSDBA "$FB3_SECDB" ;;
    fb4s) echo "$sql" | stock_embedded fb4s -q -b -user SYSDBA "$FB4_SECDB" ;;
    *) install_set_sysdba "$1" ;;
  esac
}

# ---------------------------------------------------------------- process control

pidfile_of() { if [ "$1" = fb3 ]; then echo "$FB3_PIDFILE"; else echo "$RUN/$1.pid"; fi; }

server_pid() { # instance -> pid of the running server process, or nothing
  local pid; pid=$(read_pid "$(pidfile_of "$1")")
  pid_alive "$pid" firebird && echo "$pid" || true
}

launch() { # instance
  local name=$1 pidfile; pidfile=$(pidfile_of "$1")
  case $name in
    fb3)
      install -d -o firebird -g firebird -m 0770 "$FB3_RUNDIR"
      rm -f "$pidfile"
      # setsid like the others: a guardian left in the caller's process group dies when a
      # job runner cleans up that group (seen here: fb3 vanished whenever the shell that had
      # restarted it was ended), while the other servers, in sessions of their own, lived on.
      setsid runuser -u firebird -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        /usr/sbin/fbguard -daemon -forever -pidfile "$pidfile" </dev/null >>"$RUN/fb3.log" 2>&1
      ;;
    fb3l | fb3r)
      # A second fbguard cannot run: its lock file lives in the compiled-in /run/firebird3.0.
      setsid setpriv --reuid=firebird --regid=firebird --init-groups \
        /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin FIREBIRD="$STATE/$name" FIREBIRD_LOCK="$STATE/$name/lock" \
        /usr/sbin/firebird -p "$(port_of "$name")" </dev/null >>"$RUN/$name.log" 2>&1 &
      ;;
    fb3s)
      stock_ns fb3s
      setsid "${NS[@]}" setpriv --reuid=firebird --regid=firebird --init-groups \
        /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin FIREBIRD_LOCK="$STATE/fb3s/lock" \
        /usr/sbin/firebird -p "$PORT_fb3s" </dev/null >>"$RUN/fb3s.log" 2>&1 &
      ;;
    fb4s)
      chroot_mount
      stock_ns fb4s
      setsid "${NS[@]}" chroot --userspec="$(chroot_fb_ids)" "$CHROOT" /usr/bin/env -i \
        PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp FIREBIRD_LOCK=/tmp/firebird-fb4s \
        /usr/sbin/firebird -p "$PORT_fb4s" </dev/null >>"$RUN/fb4s.log" 2>&1 &
      ;;
    fb4)
      chroot_mount
      setsid chroot --userspec="$(chroot_fb_ids)" "$CHROOT" /usr/bin/env -i \
        PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp \
        /usr/sbin/firebird -p "$PORT_fb4" </dev/null >>"$RUN/fb4.log" 2>&1 &
      ;;
    *) install_launch "$name" ;;
  esac
  local bg=${!:-} port; port=$(port_of "$name")
  wait_port "$port" 30 || die "$name did not open port $port; see $RUN/$name.log and /var/log/firebird"
  # fbguard writes its own pid file; for the others setsid, unshare, sh, setpriv, chroot and env
  # all exec, so the background job's pid is the server's
  if [ "$name" != fb3 ]; then
    pid_alive "$bg" firebird || die "$name: pid $bg is not the firebird server"
    echo "$bg" >"$pidfile"
  fi
}

wait_gone() { # pid tenths -> 0 once the firebird process pid is gone, 1 if it is still there
  local i
  for ((i = 0; i < $2; i++)); do
    pid_alive "$1" firebird || return 0
    sleep 0.1
  done
  ! pid_alive "$1" firebird
}

stop_instance() { # instance
  local name=$1 pid guard
  pid=$(server_pid "$name")
  if [ -z "$pid" ]; then
    rm -f "$(pidfile_of "$name")"
    return 0
  fi
  log "stopping $name (pid $pid)"
  if [ "$name" = fb3 ]; then
    guard=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")
    pid_alive "$guard" fbguard && kill "$guard"   # the guardian stops its server and exits
  fi
  kill "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" 150; then  # a hung server ignores TERM; its port closes once it is gone
    log "$name did not stop in 15 s: killed"
    kill -KILL "$pid"
    wait_gone "$pid" 50 || true
  fi
  rm -f "$(pidfile_of "$name")"
  if port_open "$(port_of "$name")"; then
    die "port $(port_of "$name") still answers after stopping $name: something else listens there"
  fi
}

port_of() { local v="PORT_$1"; echo "${!v}"; }

# ---------------------------------------------------------------- per-instance state

db_of() { # instance -> database path as the server sees it
  case $1 in
    fb4) echo "$FB4_DBDIR/$TEST_DB" ;;
    fb4s) echo "$FB4S_DBDIR/$TEST_DB" ;;
    *) echo "$STATE/db/$1/$TEST_DB" ;;
  esac
}

dbdir_host() { # instance -> the db directory as seen from the host
  case $1 in
    fb4) echo "$CHROOT$FB4_DBDIR" ;;
    fb4s) echo "$CHROOT$FB4S_DBDIR" ;;
    *) echo "$STATE/db/$1" ;;
  esac
}

ensure_objects() { # instance
  local name=$1 port db; port=$(port_of "$1"); db=$(db_of "$1")
  if [ ! -f "$(dbdir_host "$name")/$TEST_DB" ]; then
    log "creating $db on $name"
    ISC_USER=SYSDBA ISC_PASSWORD=$SYSDBA_PW isql-fb -q -b <<EOF
SET SQL DIALECT 3;
CREATE DATABASE '127.0.0.1/$port:$db' PAGE_SIZE 8192 DEFAULT CHARACTER SET UTF8;
EOF
  fi
  local users="CREATE OR ALTER USER FBWTEST PASSWORD 'fbwtest-pw' USING PLUGIN Srp;
CREATE OR ALTER USER \"john.doe\" PASSWORD 'jd-pw' USING PLUGIN Srp;"
  if [ "$name" = fb3l ]; then
    users+="
CREATE OR ALTER USER $LEGACY_USER PASSWORD '$LEGACY_PW' USING PLUGIN Legacy_UserManager;"
  fi
  printf '%s\nCOMMIT;\n' "$users" | isql_remote "$port" "$db" >/dev/null
}

# Bring one instance to "running with current config and our password"; idempotent.
start_instance() { # instance
  local name=$1 changed=1 pid
  case $name in
    fb3) configure_fb3 && changed=0 ;;
    fb3l) configure_fb3_instance fb3l "$PORT_fb3l" "WireCrypt = Enabled" \
            "AuthServer = Srp256, Srp, Legacy_Auth" "UserManager = Srp, Legacy_UserManager" && changed=0 ;;
    fb3r) configure_fb3_instance fb3r "$PORT_fb3r" "WireCrypt = Required" \
            "AuthServer = Srp256, Srp" "UserManager = Srp" && changed=0 ;;
    fb4) ensure_fb4_chroot; chroot_mount; configure_fb4 && changed=0 ;;
    fb3s) configure_stock fb3s && changed=0 ;;
    fb4s) ensure_fb4_chroot; chroot_mount; configure_stock fb4s && changed=0 ;;
    *) install_configure "$name" && changed=0 ;;
  esac
  [ "$name" = fb4 ] || [ "$name" = fb4s ] || install -d -o firebird -g firebird -m 0770 "$STATE/db/$name"
  pid=$(server_pid "$name")
  if [ -n "$pid" ] && [ "$changed" = 0 ]; then
    log "$name: configuration changed, restarting"
    stop_instance "$name"; pid=""
  fi
  if [ -n "$pid" ] && { [ ! -f "$(dbdir_host "$name")/$TEST_DB" ] ||
       ! sql_value "$(port_of "$name")" "$(db_of "$name")" "1" | grep -q 1; }; then
    # running, but not (yet) with our password and database, or hung: the password is set with it
    # down, and a hung server is stopped (killed when it does not end) and started again
    log "$name: no answer to SYSDBA with our password in the test database (not set up yet, or the server hangs); restarting"
    stop_instance "$name"; pid=""
  fi
  if [ -z "$pid" ]; then
    port_open "$(port_of "$name")" && die "port $(port_of "$name") is taken by another process"
    # the package's postinst runs isql as root and may leave root-owned lock files behind
    if [ "$name" = fb3 ] && [ -d /tmp/firebird ]; then chown -R firebird:firebird /tmp/firebird; fi
    set_sysdba_embedded "$name"
    launch "$name"
    log "$name: started on port $(port_of "$name")"
  fi
  ensure_objects "$name"
}

# ---------------------------------------------------------------- commands

write_env() {
  local v3 v4 v3l v3r v3s v4s tmp
  v3=$(sql_value "$PORT_fb3" "$(db_of fb3)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  v4=$(sql_value "$PORT_fb4" "$(db_of fb4)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  v3l=$(sql_value "$PORT_fb3l" "$(db_of fb3l)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  v3r=$(sql_value "$PORT_fb3r" "$(db_of fb3r)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  v3s=$(sql_value "$PORT_fb3s" "$(db_of fb3s)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  v4s=$(sql_value "$PORT_fb4s" "$(db_of fb4s)" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  tmp=$(mktemp)
  cat >"$tmp" <<EOF
# Written by scripts/fb-servers.sh start; source with \`set -a; . $ENV_FILE; set +a\`.
FBW_STATE=$STATE
FBW_USER=SYSDBA
FBW_PASSWORD=$SYSDBA_PW
FBW_TEST_USER=FBWTEST
FBW_TEST_PASSWORD=fbwtest-pw
FBW_QUOTED_USER=john.doe
FBW_QUOTED_PASSWORD=jd-pw
FBW_FB3_HOST=127.0.0.1
FBW_FB3_PORT=$PORT_fb3
FBW_FB3_DB=$(db_of fb3)
FBW_FB3_VERSION=$v3
FBW_FB4_HOST=127.0.0.1
FBW_FB4_PORT=$PORT_fb4
FBW_FB4_DB=$(db_of fb4)
FBW_FB4_VERSION=$v4
FBW_FB4_CHROOT=$CHROOT
FBW_FB3L_HOST=127.0.0.1
FBW_FB3L_PORT=$PORT_fb3l
FBW_FB3L_DB=$(db_of fb3l)
FBW_FB3L_VERSION=$v3l
FBW_LEGACY_USER=$LEGACY_USER
FBW_LEGACY_PASSWORD=$LEGACY_PW
FBW_FB3R_HOST=127.0.0.1
FBW_FB3R_PORT=$PORT_fb3r
FBW_FB3R_DB=$(db_of fb3r)
FBW_FB3R_VERSION=$v3r
FBW_FB3S_HOST=127.0.0.1
FBW_FB3S_PORT=$PORT_fb3s
FBW_FB3S_DB=$(db_of fb3s)
FBW_FB3S_VERSION=$v3s
FBW_FB4S_HOST=127.0.0.1
FBW_FB4S_PORT=$PORT_fb4s
FBW_FB4S_DB=$(db_of fb4s)
FBW_FB4S_VERSION=$v4s
FBW_DBDIR_FB3=$STATE/db/fb3
FBW_DBDIR_FB4=$FB4_DBDIR
FBW_DBDIR_FB4_HOST=$CHROOT$FB4_DBDIR
FBW_DBDIR_FB3L=$STATE/db/fb3l
FBW_DBDIR_FB3R=$STATE/db/fb3r
FBW_DBDIR_FB3S=$STATE/db/fb3s
FBW_DBDIR_FB4S=$FB4S_DBDIR
FBW_DBDIR_FB4S_HOST=$CHROOT$FB4S_DBDIR
# >>> registered servers (start-install, register)
$(reg_env)
EOF
  install -m 0600 "$tmp" "$ENV_FILE.new"
  mv "$ENV_FILE.new" "$ENV_FILE"
  rm -f "$tmp"
}

check_state_dir() {
  # The FB4 chroot there has /proc mounted: inside a checkout, grep -r and indexers walk into it.
  case "$(realpath -m "$STATE")/" in
    "$(realpath "$REPO")"/*) die "state dir $STATE is inside the checkout $REPO; set FBWIRE_STATE outside it (default /var/tmp/fbwire-state)" ;;
  esac
  install -d -m 0755 "$STATE"
  install -d -o firebird -g firebird -m 0755 "$RUN"
  install -d -m 0755 "$STATE/db"
  # The FB3 servers run as firebird and read their config and databases under $STATE.
  runuser -u firebird -- test -x "$STATE/db" ||
    die "user firebird cannot reach $STATE (a parent directory is not world-searchable); set FBWIRE_STATE to e.g. /var/tmp/fbwire-state"
}

load_secrets() {
  SYSDBA_PW=$(secret "$SECRETS/sysdba.password" 20)
  # Legacy_Auth only ever looks at the first 8 characters.
  LEGACY_PW=$(secret "$SECRETS/legacy.password" 8)
}

cmd_start() {
  [ "$(id -u)" -eq 0 ] || die "start must run as root"
  local t0=$SECONDS name names=("$@")
  # without names: ours, then every registered installation
  [ "${#names[@]}" -gt 0 ] || mapfile -t names < <(printf '%s\n' "${INSTANCES[@]}"; reg_names install)
  reg_load_ports
  install -d -m 0755 "$STATE"
  exec 9>"$STATE/.lock"
  flock 9
  load_secrets
  ensure_host_packages
  check_state_dir
  for name in "${names[@]}"; do
    local t1=$SECONDS
    if [ "$(reg_get "$name" KIND)" = remote ]; then
      reg_version "$name"   # not ours to start: it must answer
    else
      [ -n "$(port_of "$name")" ] || die "unknown server $name (not one of ours, not registered)"
      start_instance "$name"
      if reg_is "$name"; then reg_version "$name"; fi
    fi
    log "$name ready ($((SECONDS - t1)) s)"
  done
  write_env
  echo "Firebird test servers ready in $((SECONDS - t0)) s:"
  cmd_status || true
  for name in "${names[@]}"; do  # a server that died meanwhile must not pass unnoticed
    [ "$(reg_get "$name" KIND)" = remote ] && continue
    [ -n "$(server_pid "$name")" ] && port_open "$(port_of "$name")" || die "$name is not running"
  done
  # The password itself stays out of logs: tests and tools read it from the environment file.
  echo "SYSDBA password: in FBW_PASSWORD of $ENV_FILE (also 'scripts/fb-servers.sh env')"
}

cmd_stop() {
  [ "$(id -u)" -eq 0 ] || die "stop must run as root"
  [ -d "$STATE" ] || return 0
  exec 9>"$STATE/.lock"
  flock 9
  local name pids=() rc=0
  reg_load_ports
  for name in "${INSTANCES[@]}" $(reg_names install); do  # ~2 s each to shut down: side by side
    stop_instance "$name" &
    pids+=($!)
  done
  for name in "${pids[@]}"; do wait "$name" || rc=1; done
  # the comparison's PostgreSQL and MariaDB (scripts/peer-servers.sh) live in the same state dir;
  # PostgreSQL 17 and MariaDB 11.8 run in the fb4 chroot: stopped before its mounts go
  "$REPO/scripts/peer-servers.sh" stop || rc=1
  chroot_umount
  return $rc
}

cmd_status() {
  local name pid port ver rc=0
  SYSDBA_PW=""
  if [ -r "$SECRETS/sysdba.password" ]; then SYSDBA_PW=$(cat "$SECRETS/sysdba.password"); fi
  reg_load_ports
  for name in $(reg_names remote); do
    ver=$(reg_login "$name" sql_value "$(port_of "$name")" "$(reg_db "$name")" \
            "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
    printf '  %-5s %s/%s  registered  version %s  db %s\n' "$name" "$(reg_get "$name" HOST)" \
      "$(port_of "$name")" "${ver:-"(no answer)"}" "$(reg_db "$name")"
    [ -n "$ver" ] || rc=1
  done
  for name in "${INSTANCES[@]}" $(reg_names install); do
    port=$(port_of "$name"); pid=$(server_pid "$name"); ver=""
    if [ -n "$pid" ] && port_open "$port"; then
      ver=$(sql_value "$port" "$(db_of "$name")" "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
      printf '  %-5s port %s  pid %-7s version %s  db %s\n' "$name" "$port" "$pid" \
        "${ver:-"(login failed)"}" "$(db_of "$name")"
      [ -n "$ver" ] || rc=1
    else
      printf '  %-5s port %s  stopped\n' "$name" "$port"
      rc=1
    fi
  done
  return $rc
}

cmd_env() {
  [ -f "$ENV_FILE" ] || die "$ENV_FILE does not exist; run: $0 start"
  cat "$ENV_FILE"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  start-install) shift; cmd_start_install "$@" ;;
  register) shift; cmd_register "$@" ;;
  unregister) shift; cmd_unregister "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) cat >&2 <<EOF
usage: $0 start [fb3|fb4|fb3l|fb3r|fb3s|fb4s|NAME ...] | stop | status | env
       $0 start-install NAME DIR                      (NAME: fb5, fb6, ...)
       $0 register NAME HOST/PORT DBDIR USER PASSWORD-FILE [HOSTDIR]
       $0 unregister NAME
EOF
     exit 2 ;;
esac
