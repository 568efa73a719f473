# SPDX-License-Identifier: MIT
# debian-mirror.sh - sourced by scripts/fb-servers.sh and tests/package/install-test.sh.
# debian_mirror prints the Debian mirror this machine's apt already uses for its own release
# (FBWIRE_DEBIAN_MIRROR overrides it), for debootstrap. The caller defines die().

# The Debian mirror this machine already uses (deb822 or one-line sources), for debootstrap.
debian_mirror() {
  if [ -n "${FBWIRE_DEBIAN_MIRROR:-}" ]; then echo "$FBWIRE_DEBIAN_MIRROR"; return; fi
  local codename url
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  url=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v cn="$codename" '
      BEGIN { RS = ""; FS = "\n" }
      { uris = ""; suites = ""; deb = 0; off = 0
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^#/) continue
          if (line ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", line); uris = line }
          if (line ~ /^Suites:/) { sub(/^Suites:[ \t]*/, "", line); suites = " " line " " }
          if (line ~ /^Types:.*(^|[ \t])deb([ \t]|$)/) deb = 1
          if (line ~ /^Enabled:[ \t]*no/) off = 1
        }
        if (deb && !off && index(suites, " " cn " ")) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }')
  if [ -z "$url" ]; then
    url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\]//' | awk -v cn="$codename" '$1 == "deb" && $3 == cn { print $2; exit }')
  fi
  [ -n "$url" ] || die "no Debian mirror for '$codename' in /etc/apt/sources.list*; set FBWIRE_DEBIAN_MIRROR"
  echo "${url%/}"
}
