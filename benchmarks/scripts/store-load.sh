#!/usr/bin/env bash
# The store server load figures of docs/benchmarks-history.md (## Store server): Haystack Table 4 configs
# C-F against a real `hayloft store`, and 64 KiB reads from the store and from nginx serving the same
# objects as plain files, interleaved. Needs the jars (mvn -DskipTests package) and nginx on PATH
# (apt-get install nginx). Usage: benchmarks/scripts/store-load.sh [seconds] [connections] [sections]
# sections: any of "writes reads nginx" (nginx needs reads, which preloads the objects).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
conns="${2:-16}"
sections="${3:-writes reads nginx}"
work="$(mktemp -d /tmp/hayloft-store-bench.XXXXXX)"
store_port=18480
nginx_port=18481
bench=(java -jar "$here/benchmarks/target/hayloft-benchmarks.jar" store load --port "$store_port" --connections "$conns"
       --warmup 3 --duration "$secs")

java -jar "$here/cli/target/hayloft.jar" store --port "$store_port" --data-dir "$work/store" \
  --set fsync=always --set volumeSizeLimit=17000000000 2>"$work/store.log" &
store_pid=$!
nginx_pid=""
cleanup() {
  kill "$store_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$store_port/health" >/dev/null 2>&1 && break
  sleep 0.2
done

run() { echo "## $*"; "${bench[@]}" "$@" | grep -v '^create volume'; echo; }

if [[ " $sections " == *" writes "* ]]; then
  vol=1
  for size in 1024 65536; do
    for batch in 1 4 16; do
      run --sizes "$size" --batch "$batch" --volume "$vol" --create-volume
      vol=$((vol + 1))
    done
  done
fi
[[ " $sections " == *" reads "* ]] || exit 0

# reads: 10,000 objects of each size, preloaded through the store (and written as files for nginx)
run --sizes 1024 --volume 100 --create-volume --preload 10000 --read-ratio 1
run --sizes 65536 --volume 101 --create-volume --preload 10000 --read-ratio 1 --write-files "$work/www/objects"
# config F: 98% reads, 2% multi-writes of 4
run --sizes 65536 --volume 101 --read-keys 10000 --read-ratio 0.98 --batch 4

[[ " $sections " == *" nginx "* ]] || exit 0
mkdir -p "$work/nginx/logs"
cat > "$work/nginx/nginx.conf" <<CONF
user root;
worker_processes auto;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
    location /objects/ { default_type application/octet-stream; }
  }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 1 50); do
  curl -sf "http://127.0.0.1:$nginx_port/objects/0" >/dev/null 2>&1 && break
  sleep 0.2
done

# side by side, interleaved: store, nginx, store, nginx
for round in 1 2 3; do
  run --sizes 65536 --volume 101 --read-keys 10000 --read-ratio 1
  echo "## nginx round $round"
  java -jar "$here/benchmarks/target/hayloft-benchmarks.jar" store load --port "$nginx_port" --connections "$conns" \
    --warmup 3 --duration "$secs" --target plain --read-ratio 1 --sizes 65536 --read-keys 10000
  echo
done
