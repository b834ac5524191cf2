#!/usr/bin/env bash
# A cluster of separate processes on loopback for `hayloft bench cluster --directory ...`:
# a directory and N stores (default 5), each its own JVM started as docs/deploy's units start them
# (java ... -jar cli/target/hayloft.jar directory|store --config FILE), with configs written to a
# temp dir (keys: docs/deploy/directory.yaml, docs/deploy/store.yaml). An open cluster (no
# clusterSecret), 3 replicas, one rack per store, fsync always (--no-fsync: never).
#
#   benchmarks/cluster-processes.sh [--stores 5] [--no-fsync] [--heap 1g] [--keep]
#
# Prints "directory 127.0.0.1:PORT" once every store is UP, then waits; Ctrl-C, SIGTERM or the end
# of the script stops every process it started (SIGTERM, then SIGKILL after 20 s) and removes the
# temp dir (--keep leaves it, with the logs). Example, in a second terminal:
#   ./hayloft bench cluster --directory 127.0.0.1:PORT --wrk
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$here/cli/target/hayloft.jar"
stores=5
fsync=always
heap=1g
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --stores) stores="$2"; shift 2 ;;
    --no-fsync) fsync=never; shift ;;
    --heap) heap="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ "$stores" -lt 3 ]; then echo "--stores must be >= 3 (3 replicas)" >&2; exit 2; fi
if [ ! -f "$jar" ]; then
  echo "building the jars (mvn package -DskipTests)..." >&2
  (cd "$here" && mvn -B -q -o -DskipTests package) >&2
fi
work="$(mktemp -d /tmp/hayloft-processes.XXXXXX)"
pids=()
stop() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap stop EXIT
trap 'exit 130' INT TERM

# Free loopback ports, chosen by the kernel.
read -r -a ports <<< "$(python3 - "$((stores + 1))" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)"
dport="${ports[0]}"
dir="127.0.0.1:$dport"
mkdir -p "$work/directory"
cat > "$work/directory.yaml" <<EOF
dataDir: $work/directory
host: 127.0.0.1
port: $dport
replication: 3
volumeLimitBytes: 4294967296
minWritableVolumes: 4
keyRangeSize: 100000
probeIntervalMillis: 2000
probeTimeoutMillis: 1000
failureThreshold: 3
autoRestore: false
EOF
java_opts=(-Xms"$heap" -Xmx"$heap" -XX:+ExitOnOutOfMemoryError --add-modules jdk.incubator.vector)
java "${java_opts[@]}" -jar "$jar" directory --config "$work/directory.yaml" --init > "$work/directory.log" 2>&1 &
pids+=($!)
for i in $(seq 1 "$stores"); do
  port="${ports[$i]}"
  mkdir -p "$work/store-$i"
  cat > "$work/store-$i.yaml" <<EOF
dataDirs: [$work/store-$i]
host: 127.0.0.1
port: $port
advertiseAddress: 127.0.0.1:$port
rack: rack-$i
directory: $dir
heartbeatMillis: 1000
volumeSizeLimit: 4294967296
fsync: $fsync
EOF
  java "${java_opts[@]}" -jar "$jar" store --config "$work/store-$i.yaml" > "$work/store-$i.log" 2>&1 &
  pids+=($!)
done

# Ready when the directory lists every store UP (bounded: 120 s).
up=0
for _ in $(seq 1 600); do
  for p in "${pids[@]}"; do
    if ! kill -0 "$p" 2>/dev/null; then
      echo "a process exited early; logs in $work:" >&2
      keep=1
      tail -n 20 "$work"/*.log >&2
      exit 1
    fi
  done
  up="$(curl -s "http://$dir/v1/stores" 2>/dev/null | grep -o '"state" *: *"UP"' | wc -l || true)"
  if [ "$up" -ge "$stores" ]; then break; fi
  sleep 0.2
done
if [ "$up" -lt "$stores" ]; then
  echo "only $up of $stores stores UP after 120 s; logs in $work" >&2
  keep=1
  exit 1
fi
echo "directory $dir"
echo "($stores stores UP, fsync $fsync, logs in $work; Ctrl-C stops them)" >&2
wait
