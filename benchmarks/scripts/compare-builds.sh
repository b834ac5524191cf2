#!/usr/bin/env bash
# Two builds of Hayloft measured side by side, interleaved, on this machine: `bench cluster` (puts and
# gets through HayloftClient on an embedded cluster) and `bench store load` (single writes and random
# reads against a real `hayloft store` process), ROUNDS rounds, then the median of each row per build
# and the ratio after/before. Each build is a checkout with its jars built
# (mvn -B -DskipTests package). Usage:
#   benchmarks/scripts/compare-builds.sh BEFORE_DIR AFTER_DIR [rounds] [seconds] [warmup]
# SECTIONS="cluster store" (default) picks what runs; e.g. SECTIONS=store for the store load alone.
# Output: one table (docs/benchmarks.md "Structure changes, before and after"); raw logs under $OUT
# (default a temp dir, kept).
set -euo pipefail
before="$(cd "$1" && pwd)"
after="$(cd "$2" && pwd)"
rounds="${3:-3}"
secs="${4:-6}"
warm="${5:-8}"
out="${OUT:-$(mktemp -d /tmp/hayloft-compare.XXXXXX)}"
mkdir -p "$out"
java=(java --add-modules jdk.incubator.vector)
port=18580

store_load() { # build label round
  local b="$1" label="$2" r="$3" dir pid
  dir="$(mktemp -d /tmp/hayloft-compare-store.XXXXXX)"
  "${java[@]}" -jar "$b/cli/target/hayloft.jar" store --port "$port" --data-dir "$dir" \
    --set fsync=always --set volumeSizeLimit=17000000000 2>"$out/store-$label-$r.err" &
  pid=$!
  for _ in $(seq 1 150); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.2
  done
  local bench=("${java[@]}" -jar "$b/benchmarks/target/hayloft-benchmarks.jar" store load --port "$port"
               --connections 16 --warmup 3 --duration "$secs")
  {
    echo "## store write 1 KiB"; "${bench[@]}" --sizes 1024 --volume 1 --create-volume
    echo "## store write 64 KiB"; "${bench[@]}" --sizes 65536 --volume 2 --create-volume
    echo "## store read 64 KiB"; "${bench[@]}" --sizes 65536 --volume 3 --create-volume --preload 10000 --read-ratio 1
  } >"$out/store-$label-$r.txt" 2>&1 || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}

cluster_load() { # build label round
  local b="$1" label="$2" r="$3"
  "${java[@]}" -jar "$b/benchmarks/target/hayloft-benchmarks.jar" cluster --seconds "$secs" --warmup "$warm" \
    --no-batched --coalesce 0 >"$out/cluster-$label-$r.txt" 2>"$out/cluster-$label-$r.err" || true
}

for r in $(seq 1 "$rounds"); do
  # alternate which build goes first, so neither always meets the warmer machine
  if (( r % 2 )); then order=("before" "after"); else order=("after" "before"); fi
  for label in "${order[@]}"; do
    if [ "$label" = before ]; then b="$before"; else b="$after"; fi
    echo "round $r: $label" >&2
    [[ " ${SECTIONS:-cluster store} " == *" cluster "* ]] && cluster_load "$b" "$label" "$r"
    [[ " ${SECTIONS:-cluster store} " == *" store "* ]] && store_load "$b" "$label" "$r"
  done
done
python3 "$(dirname "${BASH_SOURCE[0]}")/compare-builds.py" "$out" "$rounds"
echo "raw output: $out" >&2
