#!/usr/bin/env bash
# Where the time goes: one client per workload, with every statement's server
# time (pg_stat_statements, track = all, so the statements claimqueue runs
# through SPI are listed beside the API call that ran them) and, with --perf, a
# CPU profile of the backend (perf record -e cpu-clock). See bench/README.md.
#
#   bash bench/profile.sh [--perf] [WORKLOAD...]    # default: every pair below
#
# WORKLOAD is a script of bench/sql without .sql (cq_onetxn, plain_onetxn,
# cq_onecall, cq_drain, plain_drain, cq_batch, plain_batch). Needs claimqueue
# installed, pg_stat_statements (postgresql-contrib) and, for --perf, perf.
# Starts its own cluster (fsync on, synchronous_commit off: the profile is of
# CPU, not of the disk); writes bench/results/tmp/profile-<ts>/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    perf_flag=
    if [ "${1:-}" = --perf ]; then perf_flag=1; shift; fi
    out=$here/results/tmp/profile-$(date -u +%Y%m%dT%H%M%SZ)
    mkdir -p "$out"
    PROFILE_PERF=$perf_flag PROFILE_OUT=$out pg_virtualenv -t \
        -o shared_preload_libraries=claimqueue,pg_stat_statements -o pg_stat_statements.track=all \
        -o fsync=on -o synchronous_commit=off \
        bash "$here/profile.sh" --inner "$@"
    echo "profile: $out"
    exit 0
fi
shift
out=$PROFILE_OUT
secs=${PROFILE_SECS:-8}
workloads=${*:-cq_onetxn plain_onetxn cq_onecall cq_drain plain_drain cq_batch plain_batch}
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -f "$here/sql/schema.sql" >/dev/null
q -c "CREATE EXTENSION pg_stat_statements" >/dev/null
for w in $workloads; do
    # 500,000 ready jobs (or rows) before each workload: no run drains them.
    q -c "TRUNCATE claimqueue.jobs, bench_plain" >/dev/null
    if [ "${w#cq_}" != "$w" ]; then
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            q -At -c "SELECT count(*) FROM enqueue_batch('bench', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 50000) g))" >/dev/null
        done
    else
        q -c "INSERT INTO bench_plain (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, 500000) g" >/dev/null
    fi
    q -c "VACUUM ANALYZE claimqueue.jobs, bench_plain" -c "CHECKPOINT" -c "SELECT pg_stat_statements_reset()" >/dev/null
    extra=()
    [ "$w" != cq_onecall ] || extra=(-D id=0 -D attempt=0)
    pgbench -n -M prepared -c 1 -T "$secs" "${extra[@]}" -f "$here/sql/$w.sql" >"$out/$w.pgbench" 2>&1 &
    pb=$!
    if [ -n "${PROFILE_PERF:-}" ]; then
        sleep 1
        pid=$(psql -X -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
        perf record -e cpu-clock -F 4999 -p "$pid" -o "$out/$w.perf.data" -- sleep $((secs - 2)) >/dev/null 2>&1 || true
        perf report -i "$out/$w.perf.data" --no-children --sort dso,sym --stdio 2>/dev/null |
            grep -v '^#' | grep -v '^$' | head -40 >"$out/$w.perf.txt" || true
    fi
    wait "$pb"
    echo "== $w: $(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out/$w.pgbench") loops/s, latency $(sed -n 's/^latency average = //p' "$out/$w.pgbench")"
    q -c "SELECT calls, round((total_exec_time / calls * 1000)::numeric, 1) AS us_per_call,
                 left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
          FROM pg_stat_statements WHERE calls > 10 ORDER BY total_exec_time DESC LIMIT 6" |
        tee "$out/$w.statements"
done
