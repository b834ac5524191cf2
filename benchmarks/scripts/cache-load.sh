#!/usr/bin/env bash
# The cache server's hit path with real processes (docs/benchmarks-history.md, ## Cache server): a
# `hayloft store` and a `hayloft cache` in front of it; 1,000 objects of each size are preloaded
# into the store, read once through the cache (now all cached), then reads are measured through the
# cache and directly from the store, alternately, with `hayloft bench store load`.
# Needs the jars (mvn -DskipTests package). Usage: benchmarks/scripts/cache-load.sh [seconds] [connections]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
conns="${2:-16}"
work="$(mktemp -d /tmp/hayloft-cache-bench.XXXXXX)"
store_port=18490
cache_port=18491
load=(java -jar "$here/benchmarks/target/hayloft-benchmarks.jar" store load --connections "$conns" --read-ratio 1)

java -jar "$here/cli/target/hayloft.jar" store --port "$store_port" --data-dir "$work/store" \
  --set fsync=never 2>"$work/store.log" &
store_pid=$!
java -jar "$here/cli/target/hayloft.jar" cache host=127.0.0.1 port="$cache_port" maxBytes=1073741824 \
  >"$work/cache.out" 2>"$work/cache.log" &
cache_pid=$!
cleanup() {
  kill "$store_pid" "$cache_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for port in "$store_port" "$cache_port"; do
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.2
  done
done

vol=200
for size in 1024 65536; do
  echo "## $size bytes"
  # preload into the store, then one pass through the cache fills it (every read a miss, then cached)
  "${load[@]}" --port "$cache_port" --target cache --store "127.0.0.1:$store_port" --sizes "$size" --volume "$vol" \
    --create-volume --preload 1000 --warmup 0 --count 20000 | grep -v '^create volume'
  for round in 1 2; do
    echo "# round $round: cache hits"
    "${load[@]}" --port "$cache_port" --target cache --store "127.0.0.1:$store_port" --sizes "$size" --volume "$vol" \
      --read-keys 1000 --warmup 2 --duration "$secs" | tail -1
    echo "# round $round: store reads"
    "${load[@]}" --port "$store_port" --sizes "$size" --volume "$vol" --read-keys 1000 --warmup 2 --duration "$secs" | tail -1
  done
  curl -s "http://127.0.0.1:$cache_port/stats"; echo
  vol=$((vol + 1))
done
