#!/usr/bin/env bash
# WAL per job: the bytes, records and full-page images the server writes per
# job of each workload (pg_stat_wal), one client, synchronous_commit = off.
# Each workload starts from a CHECKPOINT after its fill, so the first change
# of each page writes its image, as in any run after a checkpoint; the same
# loops over the same fill make two builds comparable (bench/README.md, "WAL
# per job").
#
#   bash bench/wal.sh [WORKLOAD...]   # default: cq_drain plain_drain cq_batch plain_batch
#
# WORKLOAD is a script of bench/sql without .sql, or the path of a script;
# a floor_* script gets the jobs moved into bench_floor first, as in
# bench/instructions.sh. WAL_JOBS (default 20,000) jobs a workload;
# SETUP_SQL='...' runs once after the benchmark's tables are made (an
# experiment's objects). Starts its own throwaway cluster; needs claimqueue
# installed, or EXTENSION_DESTDIR=DIR for a build installed with
# `make install DESTDIR=DIR` (Debian's extension_destdir; an older release's
# build serves to compare with it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    . "$here/throwaway.sh"
    rerun_in_throwaway_cluster "$here/wal.sh" synchronous_commit=off autovacuum=off -- "$@"
fi
shift
jobs=${WAL_JOBS:-20000}
workloads=${*:-cq_drain plain_drain cq_batch plain_batch}
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
val() { psql -X -q -v ON_ERROR_STOP=1 -At -c "$1"; }

q -f "$here/sql/schema.sql" >/dev/null
[ -z "${SETUP_SQL:-}" ] || q -c "$SETUP_SQL" >/dev/null
workload_file() { case $1 in */*) echo "$1" ;; *) echo "$here/sql/$1.sql" ;; esac; }
echo "claimqueue $(val "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'"), $jobs jobs a workload"
printf '%-12s %8s %12s %10s %10s\n' workload jobs "bytes/job" "records/job" "fpi/job"
for w in $workloads; do
    per=1 loops=$jobs
    case $w in *batch*) per=100; loops=$((jobs / 100)) ;; esac
    q -c 'TRUNCATE claimqueue.jobs, bench_plain, bench_floor' >/dev/null
    left=$((jobs + 1000))
    while [ "$left" -gt 0 ]; do
        k=$((left < 50000 ? left : 50000))
        val "SELECT count(*) FROM enqueue_batch('bench', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $k) g))" >/dev/null
        left=$((left - k))
    done
    q -c "INSERT INTO bench_plain (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, $((jobs + 1000))) g" \
      -c 'VACUUM ANALYZE' -c 'CHECKPOINT' >/dev/null
    case ${w##*/} in floor_*)
        q -c 'INSERT INTO bench_floor SELECT * FROM claimqueue.jobs' -c 'TRUNCATE claimqueue.jobs' \
          -c "SELECT setval('bench_floor_next', min(id), false), setval('bench_floor_batch', min(id), false) FROM bench_floor" \
          -c 'VACUUM ANALYZE bench_floor' -c 'CHECKPOINT' >/dev/null ;;
    esac
    read -r b0 r0 f0 < <(val "SELECT wal_bytes, wal_records, wal_fpi FROM pg_stat_wal" | tr '|' ' ')
    extra=()
    [ "$w" != cq_onecall ] || extra=(-D id=0 -D attempt=0)
    pgbench -n -M prepared -c 1 -t "$loops" "${extra[@]}" -f "$(workload_file "$w")" >/dev/null 2>&1 ||
        { echo "wal: pgbench $w failed" >&2; exit 1; }
    # pgbench's backend reports its WAL counters as it exits.
    sleep 1
    read -r b1 r1 f1 < <(val "SELECT wal_bytes, wal_records, wal_fpi FROM pg_stat_wal" | tr '|' ' ')
    case ${w##*/} in
    floor_*) done=$(val "SELECT count(*) FROM bench_floor WHERE finished_at IS NOT NULL") ;;
    cq_*) done=$(val "SELECT count(*) FROM claimqueue.jobs WHERE state = 'done'") ;;
    *) done=$(val "SELECT count(*) FROM bench_plain WHERE status = 'done'") ;;
    esac
    [ "$done" -gt 0 ] || { echo "wal: $w finished no job" >&2; exit 1; }
    awk -v w="${w##*/}" -v n="$done" -v b=$((b1 - b0)) -v r=$((r1 - r0)) -v f=$((f1 - f0)) \
        'BEGIN { printf "%-12s %8d %12.1f %10.2f %10.3f\n", w, n, b / n, r / n, f / n }'
done
