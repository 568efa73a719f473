# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# fb-servers-registry.sh - the Firebird servers registered with scripts/fb-servers.sh beyond its
# own six (sourced by it, not run): `start-install` makes a test instance of any Firebird
# installation directory, `register` records a server already running, `unregister` forgets one.
# One file per registration, <state>/registered/NAME.conf, KEY=VALUE lines:
#   KIND=install DIR=<installation> PORT=<port>      an instance this script runs
#   KIND=remote HOST=<host> PORT=<port> DBDIR=<dir> USER=<login>   (password: <secrets>/NAME.password)
#               [HOSTDIR=<dir>]  DBDIR as this machine sees it, for a server in a chroot or container
# plus VERSION=, the engine version the server last reported. Expects STATE, RUN, SECRETS,
# SYSDBA_PW and the helpers of fb-servers.sh (log, die, conf_apply, sql_value, ...).

REG=$STATE/registered
INSTALL_PORT_FIRST=$((${FBWIRE_PORT_BASE:-3050} + 10))   # 3060: clear of the six above

# fb5, fb6, fb5x...: "fb", the major version, an optional lower-case suffix. Not one of ours.
reg_check_name() { # name
  [[ $1 =~ ^fb[0-9]+[a-z0-9]*$ ]] || die "server name '$1' must be fb<major>[suffix], e.g. fb5, fb6"
  local n
  for n in "${INSTANCES[@]}"; do [ "$n" != "$1" ] || die "$1 is one of the script's own servers"; done
}

reg_names() { # [kind] -> registered names, sorted
  local f
  [ -d "$REG" ] || return 0
  for f in "$REG"/*.conf; do
    [ -f "$f" ] || continue
    if [ -z "${1:-}" ] || [ "$(reg_get "${f##*/}" KIND)" = "$1" ]; then basename "$f" .conf; fi
  done
}

reg_get() { # name[.conf] key -> value, or nothing
  local f=$REG/${1%.conf}.conf
  [ -f "$f" ] && awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }' "$f" || true
}

reg_set() { # name key value (rewrites the key's line)
  local f=$REG/$1.conf tmp
  tmp=$(mktemp)
  { [ -f "$f" ] && grep -v "^$2=" "$f"; printf '%s=%s\n' "$2" "$3"; } >"$tmp" || true
  install -m 0644 "$tmp" "$f"
  rm -f "$tmp"
}

reg_is() { [ -f "$REG/$1.conf" ]; }

# PORT_<name> for each registration, so port_of and the other per-instance helpers work on them.
reg_load_ports() {
  local n
  for n in $(reg_names); do printf -v "PORT_$n" '%s' "$(reg_get "$n" PORT)"; done
}

# ---------------------------------------------------------------- installations

# The security database an installation ships (security5.fdb, security6.fdb, ...).
install_secdb_name() { # dir
  local f n=0 found=""
  for f in "$1"/security[0-9]*.fdb; do [ -f "$f" ] && found=${f##*/} n=$((n + 1)); done
  [ "$n" = 1 ] || die "$1 has $n security*.fdb files, expected one (is it a Firebird installation?)"
  echo "$found"
}

install_check_dir() { # dir
  [ -x "$1/bin/firebird" ] || die "$1/bin/firebird not found: DIR must be a Firebird installation (e.g. /opt/firebird, or a source build's gen/Release/firebird)"
  [ -x "$1/bin/isql" ] || die "$1/bin/isql not found"
  [ -f "$1/firebird.conf" ] || die "$1/firebird.conf not found"
  install_secdb_name "$1" >/dev/null
  runuser -u firebird -- test -x "$1/bin/firebird" ||
    die "user firebird cannot run $1/bin/firebird (a parent directory is not searchable)"
}

install_free_port() {
  local p used n
  for ((p = INSTALL_PORT_FIRST; p < INSTALL_PORT_FIRST + 100; p++)); do
    used=0
    for n in $(reg_names); do [ "$(reg_get "$n" PORT)" != "$p" ] || used=1; done
    [ "$used" = 0 ] && ! port_open "$p" && { echo "$p"; return 0; }
  done
  die "no free port from $INSTALL_PORT_FIRST to $((INSTALL_PORT_FIRST + 99))"
}

# The instance's root: DIR's files linked, firebird.conf, databases.conf and the security database
# copied (the first two only once: the copy is the user's file plus our managed block), intl
# copied as for fb3l (character sets stay undefined when the module is loaded through a link).
# Returns 0 when something the server reads changed.
install_configure() { # name
  local name=$1 dir root=$STATE/$1 changed=1 entry secdb port
  dir=$(reg_get "$name" DIR) port=$(reg_get "$name" PORT)
  install_check_dir "$dir"
  secdb=$(install_secdb_name "$dir")
  install -d -o firebird -g firebird -m 0755 "$root"
  install -d -o firebird -g firebird -m 0770 "$root/lock"
  for entry in "$dir"/*; do
    case ${entry##*/} in
      firebird.conf | databases.conf | security[0-9]*.fdb | intl) continue ;;
    esac
    if [ "$(readlink "$root/${entry##*/}" 2>/dev/null)" != "$entry" ]; then
      ln -sfn "$entry" "$root/${entry##*/}"
      changed=0
    fi
  done
  if [ -d "$dir/intl" ]; then
    install -d -m 0755 "$root/intl"
    for entry in "$dir"/intl/*; do
      write_if_changed "$root/intl/${entry##*/}" <"$entry" && changed=0
    done
  fi
  local f
  for f in firebird.conf databases.conf; do
    [ -f "$root/$f" ] || { [ -f "$dir/$f" ] && install -m 0644 "$dir/$f" "$root/$f" && changed=0; } || true
  done
  # Only what every test instance has: the port, wire crypt Enabled (plain captures stay readable),
  # the SRP plugins the tests log in with. Everything else is the user's, RemoteBindAddress too:
  # the capture tests reach the fb4 slot at 127.0.0.2 to keep other traffic out of their filter.
  conf_apply "$root/firebird.conf" "${common_conf[@]}" "RemoteServicePort = $port" && changed=0
  if [ ! -f "$root/$secdb" ]; then
    log "$name: copying $dir/$secdb as its own security database"
    install -o firebird -g firebird -m 0660 "$dir/$secdb" "$root/$secdb"
    changed=0
  fi
  return $changed
}

# Embedded isql of the installation as user firebird, with the instance's root and lock dir.
install_embedded() { # name isql-args...
  local name=$1 dir; shift
  dir=$(reg_get "$name" DIR)
  runuser -u firebird -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
    FIREBIRD="$STATE/$name" FIREBIRD_LOCK="$STATE/$name/lock" "$dir/bin/isql" "$@"
}

install_set_sysdba() { # name
  local secdb
  secdb=$(install_secdb_name "$(reg_get "$1" DIR)")
  echo "CREATE OR ALTER USER SYSDBA PASSWORD '$SYSDBA_PW' USING PLUGIN Srp;" |
    install_embedded "$1" -q -b -user SYSDBA "$STATE/$1/$secdb"
}

install_launch() { # name -> pid of the server (a background job of the caller)
  local name=$1 dir
  dir=$(reg_get "$name" DIR)
  setsid setpriv --reuid=firebird --regid=firebird --init-groups \
    /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin FIREBIRD="$STATE/$name" \
    FIREBIRD_LOCK="$STATE/$name/lock" "$dir/bin/firebird" </dev/null >>"$RUN/$name.log" 2>&1 &
}

cmd_start_install() { # name dir
  [ "$(id -u)" -eq 0 ] || die "start-install must run as root"
  [ $# = 2 ] || die "usage: start-install NAME DIR"
  local name=$1 dir
  reg_check_name "$name"
  dir=$(realpath -e "$2") || die "no such directory: $2"
  install -d -m 0755 "$STATE"
  exec 9>"$STATE/.lock"
  flock 9
  load_secrets
  check_state_dir
  install_check_dir "$dir"
  if reg_is "$name" && [ "$(reg_get "$name" KIND)" != install ]; then
    die "$name is registered as a running server; unregister it first"
  fi
  install -d -m 0755 "$REG"
  if [ "$(reg_get "$name" DIR)" != "$dir" ]; then
    [ -z "$(server_pid "$name")" ] || stop_instance "$name"
    reg_set "$name" KIND install
    reg_set "$name" DIR "$dir"
  fi
  [ -n "$(reg_get "$name" PORT)" ] || reg_set "$name" PORT "$(install_free_port)"
  reg_load_ports
  start_instance "$name"
  reg_version "$name"
  refresh_env
  log "$name: Firebird $(reg_get "$name" VERSION) from $dir on port $(port_of "$name")"
}

# ---------------------------------------------------------------- running servers

# Our isql helpers log in with LOGIN_USER / LOGIN_PW at SQL_HOST (the caller's locals).
# HOSTDIR (optional) is DBDIR as seen from this machine when the server runs in a chroot or a
# container with its own file system view (tests that look at database files use it).
cmd_register() { # name host/port dbdir user password-file [hostdir]
  [ "$(id -u)" -eq 0 ] || die "register must run as root"
  [ $# = 5 ] || [ $# = 6 ] || die "usage: register NAME HOST/PORT DBDIR USER PASSWORD-FILE [HOSTDIR]"
  local name=$1 addr=$2 dbdir=$3 SQL_HOST port LOGIN_USER=$4 LOGIN_PW hostdir=${6:-}
  reg_check_name "$name"
  [[ $addr =~ ^([^/]+)/([0-9]+)$ ]] || die "address '$addr' is not HOST/PORT"
  SQL_HOST=${BASH_REMATCH[1]} port=${BASH_REMATCH[2]}
  [ -r "$5" ] || die "cannot read the password file $5"
  LOGIN_PW=$(head -n 1 "$5")
  [ -n "$LOGIN_PW" ] || die "$5 is empty"
  install -d -m 0755 "$STATE"
  exec 9>"$STATE/.lock"
  flock 9
  load_secrets
  if reg_is "$name" && [ "$(reg_get "$name" KIND)" != remote ]; then
    die "$name is a started installation; unregister it first"
  fi
  [ -z "$hostdir" ] || [ -d "$hostdir" ] || die "no such directory: $hostdir"
  local db=$dbdir/$TEST_DB
  if ! sql_value "$port" "$db" 1 | grep -qx 1; then
    log "$name: creating $db"
    printf "SET SQL DIALECT 3;\nCREATE DATABASE '%s/%s:%s' PAGE_SIZE 8192 DEFAULT CHARACTER SET UTF8;\n" \
      "$SQL_HOST" "$port" "$db" |
      ISC_USER=$LOGIN_USER ISC_PASSWORD=$LOGIN_PW isql-fb -q -b ||
      die "$name: cannot log in to $SQL_HOST/$port as $LOGIN_USER or create $db"
  fi
  printf '%s\nCOMMIT;\n' "CREATE OR ALTER USER FBWTEST PASSWORD 'fbwtest-pw' USING PLUGIN Srp;
CREATE OR ALTER USER \"john.doe\" PASSWORD 'jd-pw' USING PLUGIN Srp;" |
    isql_remote "$port" "$db" >/dev/null || die "$name: cannot create the test users"
  install -d -m 0755 "$REG"
  install -d -m 0700 "$SECRETS"
  (umask 077; printf '%s\n' "$LOGIN_PW" >"$SECRETS/$name.password")
  reg_set "$name" KIND remote
  reg_set "$name" HOST "$SQL_HOST"
  reg_set "$name" PORT "$port"
  reg_set "$name" DBDIR "$dbdir"
  reg_set "$name" USER "$LOGIN_USER"
  reg_set "$name" HOSTDIR "$hostdir"
  reg_version "$name"
  refresh_env
  log "$name: Firebird $(reg_get "$name" VERSION) at $addr registered"
}

cmd_unregister() { # name
  [ "$(id -u)" -eq 0 ] || die "unregister must run as root"
  [ $# = 1 ] || die "usage: unregister NAME"
  reg_is "$1" || die "$1 is not registered"
  exec 9>"$STATE/.lock"
  flock 9
  reg_load_ports
  [ "$(reg_get "$1" KIND)" != install ] || stop_instance "$1"
  rm -f "$REG/$1.conf" "$SECRETS/$1.password"
  load_secrets
  refresh_env
  log "$1 unregistered (its files under $STATE stay)"
}

# Log in to a registered server as the tests will; VERSION= what it reports.
reg_login() { # name command... (runs the command with SQL_HOST, LOGIN_USER, LOGIN_PW set)
  local name=$1 SQL_HOST=127.0.0.1 LOGIN_USER=SYSDBA LOGIN_PW=${SYSDBA_PW:-}
  shift
  if [ "$(reg_get "$name" KIND)" = remote ]; then
    SQL_HOST=$(reg_get "$name" HOST) LOGIN_USER=$(reg_get "$name" USER)
    LOGIN_PW=$(cat "$SECRETS/$name.password" 2>/dev/null || true)
  fi
  "$@"
}

reg_db() { # name -> the test database path on the server
  if [ "$(reg_get "$1" KIND)" = remote ]; then echo "$(reg_get "$1" DBDIR)/$TEST_DB"; else db_of "$1"; fi
}

reg_version() { # name
  local v
  v=$(reg_login "$1" sql_value "$(reg_get "$1" PORT)" "$(reg_db "$1")" \
        "rdb\$get_context('SYSTEM','ENGINE_VERSION')")
  [ -n "$v" ] || die "$1: no answer to a version query on port $(reg_get "$1" PORT)"
  reg_set "$1" VERSION "$v"
}

# The servers.env lines of every registration.
reg_env() {
  local n up kind
  for n in $(reg_names); do
    up=${n^^} kind=$(reg_get "$n" KIND)
    echo "# $n: registered ($kind) with scripts/fb-servers.sh"
    if [ "$kind" = remote ]; then
      echo "FBW_${up}_HOST=$(reg_get "$n" HOST)"
      echo "FBW_${up}_USER=$(reg_get "$n" USER)"
      echo "FBW_${up}_PASSWORD=$(cat "$SECRETS/$n.password" 2>/dev/null || true)"
      echo "FBW_DBDIR_${up}=$(reg_get "$n" DBDIR)"
      [ -z "$(reg_get "$n" HOSTDIR)" ] || echo "FBW_DBDIR_${up}_HOST=$(reg_get "$n" HOSTDIR)"
    else
      echo "FBW_${up}_HOST=127.0.0.1"
      echo "FBW_DBDIR_${up}=$(dbdir_host "$n")"
    fi
    echo "FBW_${up}_PORT=$(reg_get "$n" PORT)"
    echo "FBW_${up}_DB=$(reg_db "$n")"
    echo "FBW_${up}_VERSION=$(reg_get "$n" VERSION)"
  done
}

# servers.env with the registrations' block replaced (the six servers' lines are kept as they are:
# registering must not need them running). Written whole, then renamed, so readers never see half.
refresh_env() {
  local tmp=$ENV_FILE.new
  [ -f "$ENV_FILE" ] || { write_env; return 0; }
  (umask 077
   { awk '/^# >>> registered/ { exit } { print }' "$ENV_FILE"
     echo "# >>> registered servers (start-install, register)"
     reg_env
   } >"$tmp")
  mv "$tmp" "$ENV_FILE"
}
