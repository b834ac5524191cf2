#!/usr/bin/env bash
# Native (JNI) against pure Java against a C program calling ISA-L directly, RS(10,4):
#   benchmarks/native/run.sh [ROUNDS]          (default 2)
# Builds isal_bench.c against the very ISA-L the erasure module's JNI shim ships (the build's
# erasure/target/classes/native/<platform>/libisal.so.2, or libisal.a when linked statically) and,
# when the system has a different libisal.so.2 (Debian bookworm: 2.30, no GFNI), against that too.
# Then ROUNDS alternating rounds of the C programs and JMH's IsalKernelBench (native backend), and
# once JMH on the pure-Java backends. The machine is shared and noisy, so both sides run many short
# trials (C: 0.2 s each; JMH: 200 ms iterations) and each figure is the best trial of all rounds.
# Prints one table in GB/s (10^9 bytes of the 10 input units per second) with the ratio to the C
# program on the same ISA-L; docs/benchmarks-history.md ("ISA-L native backend") records it.
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
ver="$(sed -n 's/^isal.version=//p' "$native/isal.properties")"
inc=/usr/include
[ -f "$root/erasure/target/isal/root/usr/include/isa-l.h" ] && grep -q 'Debian' "$native/isal.properties" \
  && inc="$root/erasure/target/isal/root/usr/include"
if [ -f "$native/libisal.so.2" ]; then
  gcc -O3 -I"$inc" -o "$out/isal_bench" "$here/isal_bench.c" "$native/libisal.so.2" -Wl,-rpath,"$native"
else
  gcc -O3 -I"$inc" -o "$out/isal_bench" "$here/isal_bench.c" -Wl,-Bstatic -lisal -Wl,-Bdynamic
fi
sys="/usr/lib/$(gcc -print-multiarch)/libisal.so.2"
sysver=""
if [ -e "$sys" ] && [ -f /usr/include/isa-l.h ] && ! cmp -s "$sys" "$native/libisal.so.2"; then
  sysver="$(basename "$(readlink -f "$sys")" | sed -n 's/^libisal\.so\.2\.0\.\([0-9]*\)$/2.\1/p')"
  gcc -O3 -I/usr/include -o "$out/isal_bench_system" "$here/isal_bench.c" -lisal
fi

jmh() { # backend json-file
  HAYLOFT_JAVA_OPTS="-Djmh.ignoreLock=true" "$root/hayloft" bench jmh -- \
    'io.hayloft.bench.isal.IsalKernelBench.(encode|repair1)$' -f 1 -wi 5 -w 200ms -i 20 -r 200ms \
    -p backend="$1" -p unitSize=1048576,65536 -p buffers=direct,kernel,heap -rf json -rff "$2" >"$2.log" 2>&1 \
    || { cat "$2.log"; exit 1; }
}
: > "$out/c.txt"
rm -f "$out"/jmh-*.json
for r in $(seq 1 "$rounds"); do
  for u in $units; do
    "$out/isal_bench" 10 4 "$u" 0.2 10 | sed "s/^c /c-$ver /" | tee -a "$out/c.txt"
    [ -n "$sysver" ] && "$out/isal_bench_system" 10 4 "$u" 0.2 10 | sed "s/^c /c-$sysver /" | tee -a "$out/c.txt"
  done
  jmh native "$out/jmh-native-$r.json"
done
for b in ${JAVA_BACKENDS:-java}; do jmh "$b" "$out/jmh-$b.json"; done

python3 - "$out" "$ver" <<'PY'
import glob, json, sys
out, ver = sys.argv[1], sys.argv[2]
best = {}
def put(key, v):
    best[key] = max(best.get(key, 0.0), v)
for line in open(f"{out}/c.txt"):
    f = line.split()
    put((f[1], int(f[4].split("=")[1]), f[0], "-", "wall"), float(f[5]))
    put((f[1], int(f[4].split("=")[1]), f[0], "-", "cpu"), float(f[8]))
for path in glob.glob(f"{out}/jmh-*.json"):
    for b in json.load(open(path)):
        p = b["params"]
        unit = int(p["unitSize"])
        op = b["benchmark"].rsplit(".", 1)[1]
        key = (op, unit, p["backend"], p["buffers"])
        top = max(x for fork in b["primaryMetric"]["rawData"] for x in fork)
        put(key + ("wall",), top * 10 * unit / 1e9)
        sec = b["secondaryMetrics"]
        for ns, calls in zip(sec["cpuNanos"]["rawData"][0], sec["calls"]["rawData"][0]):
            if ns > 0:
                put(key + ("cpu",), calls * 10 * unit / ns)
print(f"{'op':13} {'unit':>8} {'impl':10} {'buffers':7} {'wall GB/s':>9} {'vs C':>5} {'cpu GB/s':>9} {'vs C':>5}")
for op in ("encode", "repair1", "accum-scratch", "accum-update"):
    for unit in (1048576, 65536):
        rw = best.get((op, unit, "c-" + ver, "-", "wall"))
        rc = best.get((op, unit, "c-" + ver, "-", "cpu"))
        for key in sorted({k[:4] for k in best if k[0] == op and k[1] == unit}):
            w = best.get(key + ("wall",), 0)
            c = best.get(key + ("cpu",), 0)
            cs = f"{c:9.2f} {100 * c / rc:4.0f}%" if c else f"{'-':>9} {'':5}"
            print(f"{op:13} {unit:>8} {key[2]:10} {key[3]:7} {w:9.2f} {100 * w / rw:4.0f}% {cs}")
PY
