#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-deps.sh - install the Debian 12 packages fbwire needs to build and test.
# Usage: scripts/install-deps.sh [package...]   (no arguments: the whole project list)
# Idempotent: packages already installed are left alone, and `apt-get update` only runs when
# something is missing, so a second run costs one dpkg-query. Needs root (or sudo) when it installs.
set -euo pipefail

DEFAULT_PACKAGES=(
  build-essential cmake pkg-config clang
  libssl-dev zlib1g-dev libluajit-5.1-dev libpcap-dev libcriterion-dev libjansson-dev
  sysbench libfbclient2 tcpdump debootstrap python3 python3-jsonschema python3-pytest python3-matplotlib libedit-dev help2man man-db
  firebird3.0-server firebird3.0-utils
  postgresql-15 mariadb-server mariadb-client openssl
)

if [ "$#" -gt 0 ]; then
  packages=("$@")
else
  packages=("${DEFAULT_PACKAGES[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  SUDO=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The package lists may be stale or absent (fresh containers ship without them): refresh once.
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
