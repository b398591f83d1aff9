#!/usr/bin/env bash
# Server time per API call: one client, synchronous_commit = off (the figure is
# CPU, not the disk), track_functions = all, and for each workload the mean
# self time of every claimqueue function it called, from pg_stat_user_functions
# (self_time / calls). See bench/README.md, "The other scripts".
#
#   bash bench/calls.sh [WORKLOAD...]   # default: cq_drain cq_onecall cq_batch
#
# WORKLOAD is a script of bench/sql without .sql. Starts its own throwaway
# cluster; needs claimqueue installed, or EXTENSION_DESTDIR=DIR for a build
# installed with `make install DESTDIR=DIR`. CALLS_SECS (default 10) per workload.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${1:-}" != --inner ]; then
    . "$here/throwaway.sh"
    rerun_in_throwaway_cluster "$here/calls.sh" track_functions=all synchronous_commit=off -- "$@"
fi
shift
secs=${CALLS_SECS:-10}
workloads=${*:-cq_drain cq_onecall cq_batch}
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -f "$here/sql/schema.sql" >/dev/null
printf '%-12s %-22s %10s %12s\n' workload function calls "self us/call"
for w in $workloads; do
    # Ready jobs before each workload, more than one client drains in the
    # time: 300,000 for one job a loop, 2,000,000 for cq_batch's 100 a loop.
    # A run that empties the queue anyway says so (RAN DRY) below.
    chunks=6
    [ "$w" != cq_batch ] || chunks=40
    q -c "TRUNCATE claimqueue.jobs" >/dev/null
    for _ in $(seq "$chunks"); do
        q -At -c "SELECT count(*) FROM enqueue_batch('bench', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, 50000) g))" >/dev/null
    done
    q -c "VACUUM ANALYZE claimqueue.jobs" -c "CHECKPOINT" -c "SELECT pg_stat_reset()" >/dev/null
    extra=()
    [ "$w" != cq_onecall ] || extra=(-D id=0 -D attempt=0)
    pgbench -n -M prepared -c 1 -T "$secs" "${extra[@]}" -f "$here/sql/$w.sql" >/tmp/calls-$$.pgbench 2>&1
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' /tmp/calls-$$.pgbench)
    sleep 1  # the statistics collector's last report
    q -At -F ' ' -c "SELECT funcname, calls, round((self_time * 1000 / calls)::numeric, 1)
                     FROM pg_stat_user_functions WHERE calls > 0 ORDER BY funcname" |
        while read -r fn calls us; do printf '%-12s %-22s %10s %12s\n' "$w" "$fn" "$calls" "$us"; done
    left=$(q -At -c "SELECT count(*) FROM claimqueue.jobs WHERE state = 'ready'")
    printf '%-12s %-22s %10s\n' "$w" "(loops/s)" "$tps"
    [ "$left" -gt 0 ] || printf '%-12s RAN DRY: the queue emptied, the figures above are understated\n' "$w"
done
rm -f /tmp/calls-$$.pgbench
