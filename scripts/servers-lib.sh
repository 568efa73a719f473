# SPDX-License-Identifier: MIT
# servers-lib.sh - the helpers scripts/fb-servers.sh and scripts/peer-servers.sh share (sourced,
# not run). Expects SECRETS (the secrets dir) to be set before secret() is called.

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    port_open "$1" && return 0
    sleep 0.1
  done
  return 1
}

# Secrets are generated once and kept; alphanumeric so they need no quoting in SQL or shell.
secret() { # file length
  if [ ! -s "$1" ]; then
    install -d -m 0700 "$SECRETS"
    # tr dies of SIGPIPE once head has enough: not an error here
    (set +o pipefail; umask 077
     LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$2" >"$1.tmp" && mv "$1.tmp" "$1")
  fi
  cat "$1"
}

# Write a whole generated file only when it differs; returns 0 if it changed.
write_if_changed() { # file [owner mode] (content on stdin)
  local tmp; tmp=$(mktemp)
  cat >"$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 1; fi
  install -o "${2:-root}" -m "${3:-0644}" "$tmp" "$1"
  rm -f "$tmp"
  return 0
}
