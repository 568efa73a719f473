# SPDX-License-Identifier: MIT
# lib-args.sh - sourced by the driver's option tests (statement-timeout.sh, fbclient-library.sh):
# reads `--lib libfbwire-sysbench.so` into LIB, loads the test servers' servers.env unless the
# environment already has it, and exports the login and the plug-in for fbwire-sysbench.
LIB=""
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -f "$LIB" ] || { echo "usage: $0 --lib libfbwire-sysbench.so" >&2; exit 2; }
ENV_FILE=${FBW_SERVERS_ENV:-${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env}
if [ -z "${FBW_FB3_PORT:-}" ]; then
  [ -r "$ENV_FILE" ] || { echo "servers not configured: run scripts/fb-servers.sh start" >&2; exit 1; }
  set -a; . "$ENV_FILE"; set +a
fi
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD FBWIRE_SYSBENCH_LIB=$LIB
