#!/usr/bin/env bash
# Fetches a newer ISA-L than the host's from Debian's packages, without installing anything:
#   fetch-isal.sh DIR
# Uses apt-get with private state under DIR (the system's sources and lists are untouched) to
# download libisal2 and libisal-dev from suite $HAYLOFT_ISAL_SUITE (default trixie, which has
# 2.31.1 with the GFNI kernels) and unpacks both with dpkg-deb -x into DIR/root. Leaves DIR/ok
# on success, so later builds reuse it. Exits non-zero with a one-line reason on any failure; the
# caller then falls back to the system's ISA-L.
set -uo pipefail
dir="$1"
suite="${HAYLOFT_ISAL_SUITE:-trixie}"
mirror="${HAYLOFT_ISAL_MIRROR:-http://deb.debian.org/debian}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

[ -f "$dir/ok" ] && exit 0
fail() { echo "native: cannot fetch ISA-L from Debian $suite: $*" >&2; exit 1; }
command -v apt-get >/dev/null 2>&1 || fail "no apt-get"
command -v dpkg-deb >/dev/null 2>&1 || fail "no dpkg-deb"
[ -f "$keyring" ] || fail "no $keyring"
arch="$(dpkg --print-architecture 2>/dev/null)" || fail "dpkg --print-architecture failed"

rm -rf "$dir"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/root" || fail "cannot create $dir"
echo "deb [arch=$arch signed-by=$keyring] $mirror $suite main" > "$dir/apt/sources.list"
apt_opts=(-q -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o "Dir::Etc::SourceParts=$dir/apt/none"
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
  -o "Acquire::Languages=none" -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
  -o "APT::Sandbox::User=root" -o "Acquire::Retries=2" -o "Acquire::http::Timeout=30")
timeout 300 apt-get "${apt_opts[@]}" update >"$dir/apt/update.log" 2>&1 \
  || fail "apt-get update failed: $(tail -1 "$dir/apt/update.log")"
(cd "$dir/debs" && timeout 300 apt-get "${apt_opts[@]}" download libisal2 libisal-dev) >"$dir/apt/download.log" 2>&1 \
  || fail "apt-get download failed: $(tail -1 "$dir/apt/download.log")"
for deb in "$dir"/debs/*.deb; do
  dpkg-deb -x "$deb" "$dir/root" || fail "dpkg-deb -x $deb failed"
done
[ -f "$dir/root/usr/include/isa-l.h" ] || fail "package has no isa-l.h"
ver="$(dpkg-deb -f "$dir"/debs/libisal2_*.deb Version)"
echo "$ver" > "$dir/package-version"
rm -rf "$dir/apt/lists" "$dir/apt/cache"   # the indexes are large and no longer needed
touch "$dir/ok"
echo "native: fetched ISA-L $ver from Debian $suite" >&2
