#!/usr/bin/env bash
# Builds the ISA-L JNI shim into the erasure jar; run by Maven (process-classes):
#   build.sh TARGET_DIR JAVA_HOME
# Output, under TARGET_DIR/classes/native/<os>-<arch>/ (the resource path NativeLibrary loads):
#   libhayloft-isal.so   the shim (RUNPATH $ORIGIN)
#   libisal.so.2         the ISA-L it was linked against, when linked dynamically
#   isal.properties      version, where it came from, how it was linked
# Which ISA-L, best first:
#   1. $HAYLOFT_ISAL_PREFIX (a directory with include/ and lib/), if set;
#   2. Debian's newer suite (fetch-isal.sh: 2.31+ with GFNI kernels), unless HAYLOFT_ISAL_FETCH=0;
#   3. the system's libisal-dev (bookworm: 2.30).
# Links libisal.a statically when the chosen ISA-L has one (then the .so needs only libc), else
# dynamically to libisal.so.2 and ships that file next to the shim.
# Never fails the build: when gcc, jni.h or ISA-L is missing it prints "native: skipped (reason)"
# and exits 0, and the pure-Java backend is used.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="$1"
jhome="${2:-${JAVA_HOME:-}}"

skip() { echo "native: skipped ($*)"; exit 0; }
[ "${HAYLOFT_NATIVE:-}" = "off" ] && skip "HAYLOFT_NATIVE=off"
[ "$(uname -s)" = "Linux" ] || skip "only Linux is supported, this is $(uname -s)"
case "$(uname -m)" in
  x86_64|amd64) platform=linux-x86_64 ;;
  aarch64|arm64) platform=linux-aarch64 ;;
  *) skip "unsupported CPU architecture $(uname -m)" ;;
esac
command -v gcc >/dev/null 2>&1 || skip "gcc not found; apt-get install gcc libisal-dev"
[ -n "$jhome" ] && [ -f "$jhome/include/jni.h" ] || skip "jni.h not found under JAVA_HOME '$jhome' (need a JDK)"
multiarch="$(gcc -print-multiarch 2>/dev/null)"

prefix="" ; libdir="" ; source=""
if [ -n "${HAYLOFT_ISAL_PREFIX:-}" ]; then
  prefix="$HAYLOFT_ISAL_PREFIX"; source="HAYLOFT_ISAL_PREFIX=$prefix"
elif [ "${HAYLOFT_ISAL_FETCH:-1}" != "0" ] && "$here/fetch-isal.sh" "$target/isal"; then
  prefix="$target/isal/root/usr"; source="Debian ${HAYLOFT_ISAL_SUITE:-trixie} libisal2 $(cat "$target/isal/package-version")"
fi
if [ -n "$prefix" ]; then
  for d in "$prefix/lib/$multiarch" "$prefix/lib" "$prefix/lib64"; do
    if [ -f "$d/libisal.a" ] || [ -e "$d/libisal.so.2" ]; then libdir="$d"; break; fi
  done
  if [ ! -f "$prefix/include/isa-l.h" ] || [ -z "$libdir" ]; then
    echo "native: no usable ISA-L under $prefix; trying the system's"; prefix=""
  fi
fi
if [ -z "$prefix" ]; then
  [ -f /usr/include/isa-l.h ] || skip "isa-l.h not found; apt-get install libisal-dev"
  prefix=/usr
  for d in "/usr/lib/$multiarch" /usr/lib /usr/lib64 /usr/local/lib; do
    if [ -f "$d/libisal.a" ] || [ -e "$d/libisal.so.2" ]; then libdir="$d"; break; fi
  done
  [ -n "$libdir" ] || skip "libisal.so.2 not found; apt-get install libisal-dev"
  source="system $(dpkg-query -W -f='libisal2 ${Version}' libisal2 2>/dev/null || echo "$libdir")"
fi

# The version: the pkg-config file, else the real library's file name (libisal.so.2.0.31 -> 2.31).
version="$(sed -n 's/^Version: *//p' "$libdir/pkgconfig/libisal.pc" 2>/dev/null | head -1)"
if [ -z "$version" ] && [ -e "$libdir/libisal.so.2" ]; then
  version="$(basename "$(readlink -f "$libdir/libisal.so.2")" | sed -n 's/^libisal\.so\.2\.0\.\([0-9]*\)$/2.\1/p')"
fi
version="${version:-unknown}"

out="$target/classes/native/$platform"
mkdir -p "$out" || skip "cannot create $out"
rm -f "$out/libhayloft-isal.so" "$out/libisal.so.2" "$out/isal.properties"
cflags=(-O3 -fPIC -shared -std=gnu11 -Wall -Wextra -fvisibility=default
  -I"$jhome/include" -I"$jhome/include/linux" -I"$prefix/include"
  -DHAYLOFT_ISAL_VERSION="\"$version\"")
if [ -f "$libdir/libisal.a" ]; then
  linkage=static
  libs=("$libdir/libisal.a")
else
  linkage=dynamic
  libs=(-L"$libdir" -l:libisal.so.2 -Wl,-rpath,'$ORIGIN')
fi
log="$target/native-build.log"
if ! gcc "${cflags[@]}" -o "$out/libhayloft-isal.so" "$here/hayloft_isal.c" "${libs[@]}" -ldl >"$log" 2>&1; then
  cat "$log"
  rm -f "$out/libhayloft-isal.so"
  skip "gcc failed, see above and $log"
fi
if [ "$linkage" = dynamic ]; then
  cp "$(readlink -f "$libdir/libisal.so.2")" "$out/libisal.so.2" || skip "cannot copy libisal.so.2"
fi
cat > "$out/isal.properties" <<PROPS
# Written by erasure/src/main/c/build.sh
isal.version=$version
isal.source=$source
isal.linkage=$linkage
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
PROPS
echo "native: built $platform/libhayloft-isal.so against ISA-L $version ($source, $linkage)"
