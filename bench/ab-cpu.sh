#!/bin/bash
# A/B of two running servers under the same load, alternated: requests served in 6 s and CPU per
# request of the server process and of all PostgreSQL processes (from /proc/<pid>/stat), for
# changes too small to see through this machine's drift between runs (docs/benchmarks.md).
# Usage: bench/ab-cpu.sh PATH WRK_LUA [ROUNDS] [PORT_A] [PORT_B]   (needs wrk, ss; same machine as PostgreSQL)
set -euo pipefail
path=$1; lua=$2; rounds=${3:-3}; ports=("${4:-4101}" "${5:-4102}")
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_ticks() { local s=0; for p in $(pgrep -x postgres); do s=$((s + $(ticks "$p"))); done; echo "$s"; }
us_per_request() { echo $(( ($1) * 1000000 / $(getconf CLK_TCK) / $2 )); }
for port in "${ports[@]}"; do wrk -t2 -c10 -d3s -s "$lua" "http://127.0.0.1:$port$path" > /dev/null; done
for _ in $(seq 1 "$rounds"); do
  for port in "${ports[@]}"; do
    pid=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
    a=$(ticks "$pid"); pa=$(pg_ticks)
    out=$(wrk -t2 -c10 -d6s --latency -s "$lua" "http://127.0.0.1:$port$path")
    b=$(ticks "$pid"); pb=$(pg_ticks)
    n=$(echo "$out" | awk '/requests in/ {print $1}')
    echo "port $port: requests $n, server $(us_per_request "$b - $a" "$n") µs/request, PostgreSQL $(us_per_request "$pb - $pa" "$n") µs/request, p99 $(echo "$out" | awk '$1 == "99%" {print $2}')"
  done
done
