#!/usr/bin/env bash
# Native (JNI) against pure Java against a C program calling ISA-L directly, RS(10,4):
#   benchmarks/native/run.sh [ROUNDS]          (default 2)
# Builds isal_bench.c against the very ISA-L the erasure module's JNI shim ships (the build's
# erasure/target/classes/native/<platform>/libisal.so.2, or libisal.a when linked statically), then
# runs ROUNDS alternating rounds of the C program and JMH's IsalKernelBench (native backend), and
# once JMH with the pure-Java backend. The machine is shared and noisy, so each figure is the best
# round, and the C and JNI runs alternate. Prints one table in GB/s (10^9 bytes of the 10 input
# units per second) with the native/C ratio; docs/benchmarks.md ("ISA-L native backend") records it.
# Environment: JAVA_BACKENDS="java vector" to measure more Java backends (default java).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${1:-2}"
units="1048576 65536"
native="$root/erasure/target/classes/native/linux-x86_64"
out="$root/benchmarks/target/native"
mkdir -p "$out"
(cd "$root" && mvn -B -q -DskipTests package) >&2
[ -f "$native/libhayloft-isal.so" ] || { echo "no JNI shim in $native: the build skipped native (see 'native:' above)"; exit 1; }
grep -E 'isal\.(version|source|linkage)' "$native/isal.properties"
inc=/usr/include
[ -f "$root/erasure/target/isal/root/usr/include/isa-l.h" ] && grep -q 'Debian' "$native/isal.properties" \
  && inc="$root/erasure/target/isal/root/usr/include"
if [ -f "$native/libisal.so.2" ]; then
  gcc -O3 -I"$inc" -o "$out/isal_bench" "$here/isal_bench.c" "$native/libisal.so.2" -Wl,-rpath,"$native"
else
  gcc -O3 -I"$inc" -o "$out/isal_bench" "$here/isal_bench.c" -Wl,-Bstatic -lisal -Wl,-Bdynamic
fi

jmh() { # backend csv-file
  "$root/hayloft" bench jmh -- 'io.hayloft.bench.isal.IsalKernelBench.(encode|repair1)$' -f 1 -wi 3 -w 1 -i 5 -r 1 \
    -p backend="$1" -p unitSize=1048576,65536 -p buffers=direct,heap -rf csv -rff "$2" >"$2.log" 2>&1 \
    || { cat "$2.log"; exit 1; }
}
: > "$out/c.txt"
for r in $(seq 1 "$rounds"); do
  for u in $units; do "$out/isal_bench" 10 4 "$u" 1 | tee -a "$out/c.txt"; done
  jmh native "$out/jmh-native-$r.csv"
done
for b in ${JAVA_BACKENDS:-java}; do jmh "$b" "$out/jmh-$b.csv"; done

# Table: best figure per (operation, unit, implementation).
{
  awk '{ split($5,u,"="); print $2, u[2], "c", "-", $6 }' "$out/c.txt"
  for f in "$out"/jmh-*.csv; do
    awk -F, 'NR>1 { gsub(/"/,""); n=split($1,b,"."); print b[n], $10, $8, $9, $5 * 10 * $10 / 1e9 }' "$f"
  done
} | awk '$1=="encode"||$1=="repair1" { k=$1" "$2" "$3" "$4; if (!(k in best) || $5>best[k]) best[k]=$5 }
  END { for (k in best) print k, best[k] }' | sort > "$out/best.txt"
printf '%-8s %8s %-8s %-7s %8s %9s\n' op unit impl buffers GB/s "vs C"
awk 'NR==FNR { if ($3=="c") c[$1" "$2]=$5; next }
  { printf "%-8s %8s %-8s %-7s %8.2f %8.0f%%\n", $1, $2, $3, $4, $5, 100*$5/c[$1" "$2] }' "$out/best.txt" "$out/best.txt"
