#!/usr/bin/env bash
# Per-call latency of claimqueue's routed calls on the test cluster of
# test/citus (a coordinator and two workers on loopback), after
# claimqueue.distribute(): each call through the coordinator (delegated by
# Citus to the queue's worker), made directly on that worker, and on one
# server (a database without Citus on the coordinator's server).
#
#   enqueue          SELECT enqueue(q, '{}')
#   heartbeat_in     SELECT heartbeat_in(q, id, attempt) of one held job
#   claim+complete   SELECT * FROM dequeue(q, 'w1'), then complete_in(q, ...)
#                    (two statements, one job per loop)
#
# One client, prepared statements, CALLS loops each (default 3000); the median
# and the 90th percentile of pgbench's per-loop latencies, and loops/s. Nothing
# asserts on the figures. Needs Citus (test/citus/build.sh) and claimqueue
# installed; run as root in a root of scripts/chroot.sh:
#
#   CALLS=3000 bash bench/citus_calls.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. test/citus/cluster.sh
calls=${CALLS:-3000}
trap cluster_stop EXIT
cluster_start || { echo "the cluster did not start"; exit 1; }
on 0 "CREATE EXTENSION claimqueue" >/dev/null
on 0 "SET client_min_messages = warning; SELECT claimqueue.distribute(preview => true)" >/dev/null
on 0 "SELECT create_queue('bench')" >/dev/null
port=$(on 0 "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('claimqueue.jobs', 'bench'::text)")
holder=1
[ "$port" = "${cq_ports[2]}" ] && holder=2
psql -qX -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d postgres -c "CREATE DATABASE one_server" >/dev/null
one() { psql -qXAt -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d one_server -c "$1"; }
one "CREATE EXTENSION claimqueue" >/dev/null
one "SELECT create_queue('bench')" >/dev/null

# bench NODE DB NAME SCRIPT: median and p90 of the loops' latencies, loops/s.
bench() {
    local n=$1 db=$2 name=$3 script=$4 dir out
    dir=$(mktemp -d)
    chmod 777 "$dir"
    printf '%s\n' "$script" >"$dir/script.sql"
    chmod 644 "$dir/script.sql"
    out=$(cd "$dir" && pgbench -n -M prepared -c 1 -t "$calls" -l --log-prefix="$dir/log" \
        -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -f "$dir/script.sql" "$db" 2>&1)
    local stats
    stats=$(cat "$dir"/log* 2>/dev/null | awk '{print $3}' | sort -n |
        awk '{a[NR] = $1} END {if (NR) printf "%.3f %.3f", a[int(NR * 0.5) + 1] / 1000, a[int(NR * 0.9) + 1] / 1000}')
    printf '%-46s median %7s ms  p90 %7s ms  %8s loops/s\n' "$name" ${stats:-"- -"} \
        "$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | cut -d. -f1)"
    grep -m1 -E "ERROR|error" <<<"$out"
    rm -rf "$dir"
}
fill() {  # fill NODE DB: CALLS + 10 ready jobs in 'bench'
    if [ "$2" = one_server ]; then one "SELECT count(enqueue('bench', '{}')) FROM generate_series(1, $((calls + 10)))" >/dev/null
    else on "$1" "SELECT count(enqueue('bench', '{}')) FROM generate_series(1, $((calls + 10)))" >/dev/null; fi
}

echo "== per-call latency, one client, $calls loops each ($(date -u +%Y-%m-%d), PostgreSQL $(pg_config --version | awk '{print $2}'), Citus $(on 0 "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), load average $(cut -d' ' -f1-3 /proc/loadavg))"
for where in one coordinator worker; do
    case $where in
        one) n=0 db=one_server label="one server" ;;
        coordinator) n=0 db=$cq_db label="through the coordinator" ;;
        worker) n=$holder db=$cq_db label="on the worker, direct" ;;
    esac
    bench "$n" "$db" "enqueue, $label" "SELECT enqueue('bench', '{}');"
    fill "$holder" "$db"
    bench "$n" "$db" "claim+complete, $label" "SELECT id, attempt FROM dequeue('bench', 'w1') \\gset
SELECT complete_in('bench', :id, :attempt);"
    if [ "$db" = one_server ]; then held=$(one "SELECT id || ' ' || attempt FROM dequeue('bench', 'w1', lease => '1 hour')")
    else held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('bench', 'w1', lease => '1 hour')"); fi
    bench "$n" "$db" "heartbeat_in, $label" "SELECT heartbeat_in('bench', ${held% *}, ${held#* });"
    if [ "$db" = one_server ]; then one "SELECT complete(${held% *}, ${held#* })" >/dev/null
    else on 0 "SELECT complete_in('bench', ${held% *}, ${held#* })" >/dev/null; fi
done
