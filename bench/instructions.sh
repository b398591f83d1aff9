#!/usr/bin/env bash
# Instructions per loop: the server backend's instruction count (valgrind's
# callgrind) per pgbench loop of each workload, one client. Unlike a time, the
# count does not move with whatever else the machine runs, so a change to the
# hot path is judged by it on a shared 2-core machine (bench/README.md,
# "Instructions per job").
#
#   bash bench/instructions.sh [WORKLOAD...]   # default: cq_drain plain_drain commit2
#
# WORKLOAD is a script of bench/sql without .sql, or the path of a script. Each runs twice, LOOPS_SHORT
# (default 500) and LOOPS_LONG (default 2500) loops, each in a backend of its
# own; the difference of the two backends' totals over the difference of the
# loops is the figure (start-up and the first-call caches cancel out).
# Needs valgrind and claimqueue installed; starts its own cluster, with the
# postmaster under callgrind (everything ~50x slower: a few minutes in all).
# Run as root it runs the server as postgres. EXTENSION_DESTDIR=DIR measures a
# build installed with `make install DESTDIR=DIR` instead (Debian's
# extension_destdir), so the shared install stays as it is. SETUP_SQL='...'
# runs once after the benchmark's tables are made (an experiment's objects).
# FILL_KEYS=N gives the claimqueue jobs N concurrency keys (tenants), the
# jobs of each key enqueued after the previous key's: with SETUP_SQL="SELECT
# alter_queue('bench', fair => true)" it measures a fair queue's claims.
# FILL_SQL='...' runs after each workload's jobs are enqueued (more rows for
# the run to live beside). DURING='COMMAND' runs in the background while each
# workload's two backends run (PGHOST, PGPORT, PGUSER and PGDATABASE name the
# cluster; its own backends are under callgrind too, and unread), and is
# stopped after them: what another client of the server costs the measured
# backend (bench/dashboard_instructions.sh).
# KEEP_PROFILE=PREFIX keeps each backend's callgrind file as PREFIX.WORKLOAD.LOOPS
# (for callgrind_annotate).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workloads=${*:-cq_drain plain_drain commit2}
short=${LOOPS_SHORT:-500}
long=${LOOPS_LONG:-2500}
bindir=$(pg_config --bindir)
command -v valgrind >/dev/null || { echo "instructions: needs valgrind" >&2; exit 2; }

dir=$(mktemp -d /tmp/claimqueue-instructions.XXXXXX)
as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" != 0 ] || chown postgres "$dir"
during=""
cleanup() {
    [ -z "$during" ] || kill -- -"$during" 2>/dev/null || true
    as_server "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    # Backends under valgrind may still be writing their files: retry.
    rm -rf "$dir" 2>/dev/null || { sleep 3; rm -rf "$dir"; }
}
trap cleanup EXIT

library=claimqueue destdir_line=
if [ -n "${EXTENSION_DESTDIR:-}" ]; then
    library=$EXTENSION_DESTDIR$(pg_config --pkglibdir)/claimqueue.so
    destdir_line="extension_destdir = '$EXTENSION_DESTDIR'"
fi
as_server "$bindir/initdb" -D "$dir/data" -A trust >/dev/null
# autovacuum off: a worker's start in one run and not the other would only
# add noise to the backends' figures, which are all that is read. The reaper
# off too: its passes, slow under valgrind, hold the oldest snapshot back, and
# a claim prunes its job's page only outside them, so the drain's count moved
# with when they ran (575 to 1,875 prunes per 2,500 claims, up to 14,000
# instructions per loop); without it every claim prunes, and two runs agree
# within 0.1 %.
cat >>"$dir/data/postgresql.conf" <<EOF
port = 5499
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = '$library'
$destdir_line
synchronous_commit = off
autovacuum = off
claimqueue.reaper_enabled = off
log_connections = on
log_line_prefix = '%p '
EOF
as_server bash -c "valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file='$dir/callgrind.%p' '$bindir/postgres' -D '$dir/data' >'$dir/server.log' 2>&1 &"
q() { as_server psql -X -q -h "$dir" -p 5499 -d postgres -v ON_ERROR_STOP=1 "$@"; }
for _ in $(seq 300); do q -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
q -f "$here/sql/schema.sql" >/dev/null
[ -z "${SETUP_SQL:-}" ] || q -c "$SETUP_SQL" >/dev/null

# A workload is a script of bench/sql, or a path to one of your own.
workload_file() { case $1 in */*) echo "$1" ;; *) echo "$here/sql/$1.sql" ;; esac; }

# total LOOPS WORKLOAD: the instruction count of one pgbench backend.
total() {
    local loops=$1 w=$2 extra=() pid file
    [ "$w" != cq_onecall ] || extra=(-D id=0 -D attempt=0)
    (cd "$dir" && as_server "$bindir/pgbench" -n -M prepared -c 1 -t "$loops" "${extra[@]}" \
        -h "$dir" -p 5499 -f "$(workload_file "$w")" postgres >"$dir/pgbench.log" 2>&1) ||
        { cat "$dir/pgbench.log" >&2; exit 1; }
    # pgbench's last connection is the one that ran the loops; callgrind
    # writes its file when that backend exits.
    pid=$(grep -a 'connection authorized.*application_name=pgbench' "$dir/server.log" | tail -1 | cut -d' ' -f1)
    file=$dir/callgrind.$pid
    for _ in $(seq 60); do grep -q '^totals:' "$file" 2>/dev/null && break; sleep 1; done
    [ -z "${KEEP_PROFILE:-}" ] || cp "$file" "$KEEP_PROFILE.$w.$loops"
    sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$file"
}

printf '%-14s %16s\n' workload "instructions/loop"
for w in $workloads; do
    # Ready jobs for both runs (a batch loop takes 100), fresh for each workload.
    per=1
    case $w in *batch*) per=100 ;; esac
    n=$(( (short + long) * per + 1000 ))
    keys=${FILL_KEYS:-0}
    if [ "$keys" -gt 0 ]; then
        fill="SELECT count(*) FROM generate_series(0, $keys - 1) k, LATERAL enqueue_batch('bench',
                (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $n / $keys + 1) g),
                concurrency_key => 'tenant' || k)"
    else
        fill="SELECT count(*) FROM enqueue_batch('bench', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $n) g))"
    fi
    q -c 'TRUNCATE claimqueue.jobs, bench_plain, bench_commit, bench_floor' \
      -c "$fill" \
      -c "INSERT INTO bench_plain (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, $n) g" \
      -c 'VACUUM ANALYZE' -c 'CHECKPOINT' >/dev/null
    # The row-write floor takes the jobs as bench_floor's rows (bench/sql/schema.sql).
    case ${w##*/} in floor_*)
        q -c 'INSERT INTO bench_floor SELECT * FROM claimqueue.jobs' -c 'TRUNCATE claimqueue.jobs' \
          -c "SELECT setval('bench_floor_next', min(id), false), setval('bench_floor_batch', min(id), false) FROM bench_floor" \
          -c 'VACUUM ANALYZE bench_floor' -c 'CHECKPOINT' >/dev/null ;;
    esac
    [ -z "${FILL_SQL:-}" ] || q -c "$FILL_SQL" -c 'VACUUM ANALYZE' -c 'CHECKPOINT' >/dev/null
    if [ -n "${DURING:-}" ]; then
        PGHOST=$dir PGPORT=5499 PGDATABASE=postgres PGUSER=$(if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi) \
            setsid bash -c "$DURING" >"$dir/during.log" 2>&1 &
        during=$!
    fi
    a=$(total "$short" "$w")
    b=$(total "$long" "$w")
    if [ -n "$during" ]; then
        kill -- -"$during" 2>/dev/null || true
        wait "$during" 2>/dev/null || true
        during=""
    fi
    printf '%-14s %16d\n' "$w" $(( (b - a) / (long - short) ))
done
