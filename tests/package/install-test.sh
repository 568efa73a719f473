#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-test.sh - install the Debian package into a fresh Debian 12 (bookworm) chroot with apt
# resolving its dependencies, then run `fbwire-sql --version` and `fbwire-sysbench --help` there
# and check what the package put in place (programs, library, docs, copyright, a man page for
# every program).
#
#   tests/package/install-test.sh path/to/fbwire_<version>_amd64.deb
#
# Every run installs a new bookworm (debootstrap --variant=minbase) into a scratch directory,
# removed afterwards, so nothing an earlier run did (a primed ld.so cache, say) can make the
# package pass where a fresh machine fails it. Only the downloaded .debs are cached, in
# $FBWIRE_STATE/deb-bookworm.tgz (debootstrap --make-tarball, from the mirror this machine's apt
# uses: scripts/lib/debian-mirror.sh); remove it to download them again. Needs root, debootstrap
# and the mirror (apt in the chroot fetches the package's dependencies from it).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DEB=$(readlink -f "${1:?usage: install-test.sh fbwire_VERSION_amd64.deb}")
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
TARBALL=$STATE/deb-bookworm.tgz
log() { printf '[install-test %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib/debian-mirror.sh
. "$REPO/scripts/lib/debian-mirror.sh"

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot)"
[ -f "$DEB" ] || die "no package $DEB"
command -v debootstrap >/dev/null || die "debootstrap is not installed"

mirror=$(debian_mirror)
install -d -m 0755 "$STATE"
# The download happens once, under a lock (another checkout's run may share the state dir); the
# tarball appears under its name only when complete.
exec 9>"$STATE/deb-bookworm.lock"
flock 9
if [ ! -f "$TARBALL" ]; then
  work=$(mktemp -d "$STATE/deb-download.XXXXXX")
  log "debootstrap --make-tarball: the .debs of a minbase bookworm from $mirror (first run only)"
  debootstrap --variant=minbase --make-tarball="$work.tgz" bookworm "$work" "$mirror" \
    >"$STATE/deb-bookworm.log" 2>&1 || { rm -rf --one-file-system "$work" "$work.tgz";
                                         die "debootstrap --make-tarball failed, see $STATE/deb-bookworm.log"; }
  rm -rf --one-file-system "$work"
  mv "$work.tgz" "$TARBALL"
fi
exec 9>&-

ROOT=$(mktemp -d "$STATE/deb-install.XXXXXX")
cleanup() {
  local m
  for m in $(awk -v r="$ROOT" 'index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" || umount -l "$m"
  done
  rm -rf --one-file-system "$ROOT" "$ROOT.log"
}
trap cleanup EXIT
log "debootstrap --unpack-tarball: a new minbase bookworm in $ROOT"
debootstrap --variant=minbase --unpack-tarball="$TARBALL" bookworm "$ROOT" "$mirror" >"$ROOT.log" 2>&1 ||
  { tail -n 30 "$ROOT.log"; die "debootstrap --unpack-tarball failed"; }
mount -t proc proc "$ROOT/proc"
if [ ! -c "$ROOT/dev/null" ]; then mount --bind /dev "$ROOT/dev"; fi
cp "$DEB" "$ROOT/tmp/"
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
              DEBIAN_FRONTEND=noninteractive "$@"; }
# First the package's dependencies and recommendations (from its control fields), then the
# package alone, as on a machine that already has them: when apt installs libraries in the same
# run, their ldconfig triggers fill the ld.so cache and would hide a package without its own.
deps="$(dpkg-deb -f "$DEB" Depends), $(dpkg-deb -f "$DEB" Recommends)"
log "apt-get satisfy its dependencies, then apt-get install ./${DEB##*/}, in a fresh bookworm chroot"
in_root sh -c "apt-get update -q && apt-get satisfy -y -q '$deps' && apt-get install -y -q /tmp/${DEB##*/}" \
  >"$ROOT.apt.log" 2>&1 || { tail -n 30 "$ROOT.apt.log"; rm -f "$ROOT.apt.log"; die "apt-get install failed"; }
rm -f "$ROOT.apt.log"

FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
out=$(in_root fbwire-sql --version 2>&1) && [[ $out == "fbwire-sql "[0-9]* ]] &&
  ok "fbwire-sql --version: $out" || fail "fbwire-sql --version: $out"
out=$(in_root fbwire-sysbench --help 2>&1) && grep -q -- '--fbwire-db=STRING' <<<"$out" &&
  grep -q -- '--fbclient-db=STRING' <<<"$out" && ok "fbwire-sysbench --help lists the fbwire and fbclient drivers" ||
  { fail "fbwire-sysbench --help"; head -n 20 <<<"$out"; }
# fbwire-compare is Python (python3 is recommended, so apt installs it): the command must find its
# package in /usr/share/fbwire/python and answer --help.
if in_root test -x /usr/bin/python3; then
  out=$(in_root fbwire-compare --help 2>&1) && grep -q -- 'fbwire-compare OUTDIR' <<<"$out" &&
    grep -q -- '--rtt LIST' <<<"$out" &&
    ok "fbwire-compare --help (its package found)" || { fail "fbwire-compare --help"; head -n 20 <<<"$out"; }
else
  fail "python3 (recommended for fbwire-compare) was not installed by apt"
fi
for dep in sysbench libssl3 zlib1g libpcap0.8 libjansson4 libluajit-5.1-2 libedit2; do
  in_root dpkg-query -W -f='${db:Status-Status}' "$dep" 2>/dev/null | grep -qx installed &&
    ok "dependency $dep installed by apt" || fail "dependency $dep not installed"
done
out=$(in_root fbwire-link --help 2>&1) && grep -q -- '--fault RULE' <<<"$out" &&
  ok "fbwire-link --help describes the fault rules" || { fail "fbwire-link --help"; head -n 20 <<<"$out"; }
# The library directory is /usr/lib/x86_64-linux-gnu when configured with prefix /usr, else /usr/lib.
libdir=/usr/lib
# The soname's ABI version (docs/library.md "ABI"): libfbwire.so.<major>, before 1.0 .so.0.<minor>.
version=$(dpkg-deb -f "$DEB" Version)
abi=${version%%.*}
[ "$abi" = 0 ] && { minor=${version#0.}; abi=0.${minor%%.*}; }
soname=libfbwire.so.$abi
[ -e "$ROOT/usr/lib/x86_64-linux-gnu/$soname" ] && libdir=/usr/lib/x86_64-linux-gnu
for f in /usr/bin/fbwire-sql /usr/bin/fbwire-pcap /usr/bin/fbwire-report /usr/bin/fbwire-bench /usr/bin/fbwire-link \
         /usr/bin/fbwire-sysbench /usr/lib/libfbwire-sysbench.so /usr/include/fbwire/fbwire.h \
         $libdir/$soname $libdir/libfbwire.a $libdir/pkgconfig/fbwire.pc \
         $libdir/cmake/fbwire/fbwireConfig.cmake /usr/share/doc/fbwire/README.md \
         /usr/share/doc/fbwire/library.md /usr/share/doc/fbwire/fbwire-link.md \
         /usr/share/doc/fbwire/copyright /usr/share/doc/fbwire/LICENSE; do
  [ -e "$ROOT$f" ] && ok "installed $f" || fail "missing $f"
done
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' \
  "$ROOT/usr/share/doc/fbwire/copyright" 2>/dev/null && grep -q '^License: MIT$' "$ROOT/usr/share/doc/fbwire/copyright" &&
  ok "copyright: Debian machine-readable format, MIT" || fail "copyright file format"
# A man page for every program the package puts in /usr/bin, rendered by the host's man.
nprogs=$(dpkg-deb -c "$DEB" | awk '$6 ~ /^\.\/usr\/bin\/./' | wc -l)
[ "$nprogs" -ge 5 ] && ok "$nprogs programs in /usr/bin" || fail "only $nprogs programs in /usr/bin"
for prog in $(dpkg-deb -c "$DEB" | awk '$6 ~ /^\.\/usr\/bin\// { sub(/^\.\/usr\/bin\//, "", $6); print $6 }'); do
  page=$ROOT/usr/share/man/man1/$prog.1.gz
  if [ -f "$page" ] && MANWIDTH=200 man -l "$page" 2>/dev/null | grep -A1 "^NAME" | grep -Eq "^ *$prog +- "; then
    ok "man page of $prog installed and renders"
  else
    fail "man page of $prog missing or not rendered"
  fi
done
in_root ldconfig -p | grep -q "$soname " && ok "ld.so finds $soname" || fail "ld.so cache lacks $soname"
for f in /usr/bin/fbwire-compare /usr/share/fbwire/python/fbwire_compare/cli.py \
         /usr/share/fbwire/python/fbwire_compare/presets/__init__.py; do
  [ -e "$ROOT$f" ] && ok "installed $f" || fail "missing $f"
done
[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "package install checks passed"
