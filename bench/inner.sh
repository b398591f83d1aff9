#!/usr/bin/env bash
# The benchmark proper. Runs inside the throwaway cluster that bench/run.sh
# starts with pg_virtualenv (PG* variables set, superuser); see bench/README.md.
#
#   bash bench/inner.sh MODE WORKDIR
#
# MODE is quick, full or history. Writes into WORKDIR (created by run.sh):
#   raw.csv       one line per measurement (before ratios)
#   windows.csv   the held-snapshot probe, one line per 10-s window
#   machine.txt   machine and server description (key: value)
#   results.csv   raw.csv with ratios to the ceilings and the plain baseline
#   table.md      the markdown tables
#   logs/         every pgbench and psql log
# Figures are information: nothing here asserts on them. The script fails
# (non-zero) when a pgbench run fails or reports failed transactions.
set -euo pipefail

mode=${1:?usage: inner.sh quick|full WORKDIR}
work=${2:?usage: inner.sh quick|full WORKDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sqldir=$here/sql
logs=$work/logs
mkdir -p "$logs"
raw=$work/raw.csv
windows=$work/windows.csv

# --- settings per mode (each can be overridden from the environment) ---------
case $mode in
quick)
    ceil_clients=${BENCH_CEIL_CLIENTS:-8}
    drain_clients=${BENCH_DRAIN_CLIENTS:-8}
    onetxn_clients=${BENCH_ONETXN_CLIENTS:-8}
    batch_clients=${BENCH_BATCH_CLIENTS:-8}
    held_secs=${BENCH_HELD_SECS:-120}
    held_backlog=${BENCH_HELD_BACKLOG:-300000}
    history=${BENCH_HISTORY:-}
    steady_secs=${BENCH_STEADY_SECS:-30}
    commit_modes=${BENCH_COMMIT_MODES:-off on}
    ;;
full)
    ceil_clients=${BENCH_CEIL_CLIENTS:-1 4 8 16 32}
    drain_clients=${BENCH_DRAIN_CLIENTS:-1 4 8 16 32}
    onetxn_clients=${BENCH_ONETXN_CLIENTS:-8}
    batch_clients=${BENCH_BATCH_CLIENTS:-8}
    held_secs=${BENCH_HELD_SECS:-600}
    held_backlog=${BENCH_HELD_BACKLOG:-1000000}
    history=${BENCH_HISTORY:-1000000}
    steady_secs=${BENCH_STEADY_SECS:-30}
    commit_modes=${BENCH_COMMIT_MODES:-off on}
    ;;
history)
    # Retained history alone (its fills dominate: about 10 minutes): the
    # ceilings and the drain with 0, 1 and 10 million finished jobs kept.
    ceil_clients=${BENCH_CEIL_CLIENTS:-8}
    drain_clients=${BENCH_DRAIN_CLIENTS:-8}
    history=${BENCH_HISTORY:-1000000 10000000}
    commit_modes=${BENCH_COMMIT_MODES:-on}
    ;;
*) echo "inner.sh: mode must be quick, full or history, not '$mode'" >&2; exit 2 ;;
esac
t_ceil=${BENCH_T_CEIL:-10}          # seconds per ceiling run
t_drain=${BENCH_T_DRAIN:-20}        # seconds per drain run
t_onetxn=${BENCH_T_ONETXN:-20}      # seconds per one-commit-per-job run
t_batch=${BENCH_T_BATCH:-10}        # seconds per batch run
drain_prefill=${BENCH_DRAIN_PREFILL:-500000}
batch_prefill=${BENCH_BATCH_PREFILL:-2000000}
held_consumers=${BENCH_HELD_CONSUMERS:-8}
held_producers=${BENCH_HELD_PRODUCERS:-2}
steady_rate=${BENCH_STEADY_RATE:-1000}  # jobs/s offered by the producers (below capacity)
window=10                           # seconds per held-snapshot window
chunk=50000                         # payloads per enqueue_batch() call
# synchronous_commit of the measured sessions (pgbench's, through PGOPTIONS):
# "off" shows the CPU cost of each workload and the ceilings it is compared
# with; "on" (durable, the server's setting) what a disk allows. Ratios are
# taken between rows of the same mode. Steady, history and held run durable.
sync=on

# --- helpers ------------------------------------------------------------------
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
psqlq() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
val() { psql -X -q -v ON_ERROR_STOP=1 -At -c "$1"; }
die() { echo "inner.sh: $*" >&2; exit 1; }
threads() { if [ "$1" -lt 2 ]; then echo 1; else echo 2; fi; }
# plus_window T: T + one window (seconds, epoch); sleep_until T: sleeps until then.
plus_window() { awk -v a="$1" -v w="$window" 'BEGIN { printf "%.3f", a + w }'; }
sleep_until() { sleep "$(awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { d = a - b; printf "%.3f", (d > 0 ? d : 0) }')"; }

# A fresh start for every workload: empty tables, vacuumed, analyzed, checkpointed.
# claimqueue.jobs is truncated without RESTART IDENTITY (ids keep growing, as a
# real queue's do).
reset_tables() {
    psqlq -c "TRUNCATE bench_commit, bench_plain, bench_floor RESTART IDENTITY" \
          -c "TRUNCATE claimqueue.jobs" >>"$logs/reset.log" 2>&1
    [ -z "$pgmq" ] || psqlq -c "TRUNCATE pgmq.q_bench, pgmq.a_bench" >>"$logs/reset.log" 2>&1
}
settle() {
    local tables="bench_commit, bench_plain, bench_floor, claimqueue.jobs, claimqueue.queues"
    [ -z "$pgmq" ] || tables="$tables, pgmq.q_bench, pgmq.a_bench"
    psqlq -c "VACUUM ANALYZE $tables" -c "CHECKPOINT" >>"$logs/reset.log" 2>&1
}

# fill_in_chunks N FUNCTION: N payloads {"n": g} into the queue 'bench' through
# FUNCTION(queue, jsonb[]), one statement a chunk of $chunk.
fill_in_chunks() {
    local left=$1 function=$2 k
    {
        while [ "$left" -gt 0 ]; do
            k=$(( left < chunk ? left : chunk ))
            echo "SELECT count(*) FROM $function('bench', (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $k) g));"
            left=$((left - k))
        done
    } | psqlq -At >/dev/null
}
# cq_fill N: N ready jobs in queue 'bench' through enqueue_batch.
cq_fill() {
    local n=$1
    fill_in_chunks "$n" enqueue_batch
    [ "$(val "SELECT count(*) FROM claimqueue.jobs WHERE state = 'ready'")" -ge "$n" ] ||
        die "cq_fill: fewer than $n ready jobs"
}
# plain_fill N: N ready rows in bench_plain.
plain_fill() {
    psqlq -c "INSERT INTO bench_plain (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, $1) g"
}
# Retained history: N finished jobs below the ready ones, written directly as
# finished rows (what claimqueue's own transitions leave behind: state done,
# attempt 1, no position, finished_at set), so 10 million take minutes, not an
# hour of API calls; plain: inserted as done.
cq_history() {
    psqlq -c "INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at,
                     created_at, started_at, finished_at, worker, payload)
              SELECT q.queue_id, 'done', 1, 5, now(), now(), now(), now(), 'history',
                     jsonb_build_object('n', g)
              FROM claimqueue.queues q, generate_series(1, $1) g WHERE q.name = 'bench'" >/dev/null
}
plain_history() {
    psqlq -c "INSERT INTO bench_plain (status, payload, claimed_at, finished_at, worker)
              SELECT 'done', jsonb_build_object('n', g), now(), now(), 'history'
              FROM generate_series(1, $1) g"
}
cq_count()    { val "SELECT count(*) FROM claimqueue.jobs WHERE state = '$1'"; }
plain_count() { val "SELECT count(*) FROM bench_plain WHERE status = '$1'"; }

# pgbench_run NAME CLIENTS SECONDS SCRIPT [PGBENCH OPTIONS...]: one pgbench run;
# sets LOOPS and TPS.
pgbench_run() {
    local name=$1 c=$2 t=$3 script=$4 out=$logs/$1.log
    shift 4
    log "  pgbench $name: -c $c -T $t $(basename "$script")${1:+ $*}, synchronous_commit=$sync"
    if ! PGOPTIONS="-c synchronous_commit=$sync" \
        pgbench -n -M prepared -c "$c" -j "$(threads "$c")" -T "$t" "$@" -f "$script" >"$out" 2>&1; then
        tail -20 "$out" >&2
        die "pgbench $name failed (log: $out)"
    fi
    LOOPS=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
    TPS=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out")
    local failed
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
    [ -n "$LOOPS" ] && [ -n "$TPS" ] || die "pgbench $name: no result in $out"
    [ "${failed:-0}" = 0 ] || die "pgbench $name: $failed failed transactions (log: $out)"
}

echo "section,sync,workload,impl,clients,duration_s,loops,loops_per_s,jobs,jobs_per_s,ceiling_ref,backlog_left,note" >"$raw"
# record SECTION WORKLOAD IMPL CLIENTS DURATION JOBS CEILING_REF BACKLOG NOTE (LOOPS/TPS from pgbench_run)
record() {
    local jobs=$6 jps=""
    if [ -n "$jobs" ] && [ "$LOOPS" -gt 0 ]; then
        jps=$(awk -v t="$TPS" -v j="$jobs" -v l="$LOOPS" 'BEGIN { printf "%.1f", t * j / l }')
    fi
    # The note is free text: quoted for CSV.
    echo "$1,$sync,$2,$3,$4,$5,$LOOPS,$TPS,$jobs,$jps,$7,$8,\"${9//\"/\"\"}\"" >>"$raw"
    log "  -> $2 $3 c=$4 sync=$sync: ${TPS} loops/s${jps:+, $jps jobs/s}${8:+, backlog left $8}${9:+ ($9)}"
}
# dry_note LEFT [NOTE]: NOTE, and "RAN DRY: rate understated" after it when no job was left.
dry_note() {
    local note=${2:-}
    [ "$1" -gt 0 ] || note="${note:+$note; }RAN DRY: rate understated"
    echo "$note"
}

# --- schema ---------------------------------------------------------------------
psqlq -f "$sqldir/schema.sql" >"$logs/schema.log" 2>&1 || { cat "$logs/schema.log" >&2; die "schema failed"; }
# PGMQ's rows when the server has its extension (not in Debian: installed by
# whoever runs the benchmark), its queue 'bench' not partitioned.
pgmq=
if [ "$(val "SELECT count(*) FROM pg_available_extensions WHERE name = 'pgmq'")" = 1 ]; then
    psqlq -c "CREATE EXTENSION pgmq" -c "SELECT pgmq.create('bench')" >>"$logs/schema.log" 2>&1 ||
        die "pgmq: CREATE EXTENSION or pgmq.create failed"
    pgmq=$(val "SELECT extversion FROM pg_extension WHERE extname = 'pgmq'")
fi

# --- machine and server description --------------------------------------------
server_setting() { val "SELECT current_setting('$1')"; }
[ "$(server_setting fsync)" = on ] || die "fsync is off: commits are not durable (run through bench/run.sh)"
[ "$(server_setting synchronous_commit)" = on ] || die "synchronous_commit is not on"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "mode: $mode"
    echo "host: nproc $(nproc), memory $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
    echo "storage: $(df -hT "$(server_setting data_directory)" | awk 'NR == 2 { print $1 " " $2 ", " $3 " total" }')"
    echo "server: $(val 'SELECT version()')"
    echo "pgbench: $(pgbench --version)"
    echo "pgmq: ${pgmq:-not installed}"
    echo "claimqueue: $(val "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'" 2>/dev/null || echo '?'), commit $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$here/.." diff --quiet HEAD -- src sql 2>/dev/null || echo ' (src/ or sql/ modified)')"
    for s in shared_buffers synchronous_commit fsync wal_sync_method full_page_writes wal_level \
             max_wal_size checkpoint_timeout autovacuum max_connections shared_preload_libraries; do
        echo "$s: $(server_setting "$s")"
    done
} >"$work/machine.txt"

# --- (1) ceilings ---------------------------------------------------------------
log "(1) commit-rate ceilings"
for sync in $commit_modes; do
for c in $ceil_clients; do
    for k in 1 2; do
        reset_tables; settle
        pgbench_run "ceiling_commit${k}_c${c}_sync_$sync" "$c" "$t_ceil" "$sqldir/commit$k.sql"
        record ceiling "commit$k" sql "$c" "$t_ceil" "" "" "" "$k INSERT commit(s) per loop"
    done
done
done
sync=on

# --- (2)+(3) drain: plain baseline and claimqueue, 2 commits per job -------------
# drain_pair SECTION CLIENTS SECONDS PREFILL HISTORY CQ_SCRIPT PLAIN_SCRIPT CEILING WORKLOAD
drain_pair() {
    local section=$1 c=$2 t=$3 prefill=$4 hist=$5 cqs=$6 pls=$7 ceil=$8 wl=$9 left
    reset_tables
    [ -z "$hist" ] || plain_history "$hist" >/dev/null
    plain_fill "$prefill" >/dev/null; settle
    pgbench_run "${wl}_plain_c${c}_sync_$sync" "$c" "$t" "$sqldir/$pls"
    left=$(plain_count ready)
    record "$section" "$wl" plain "$c" "$t" "$(( $(plain_count done) - ${hist:-0} ))" "$ceil" "$left" "$(dry_note "$left")"

    reset_tables
    [ -z "$hist" ] || cq_history "$hist"
    cq_fill "$prefill"; settle
    pgbench_run "${wl}_claimqueue_c${c}_sync_$sync" "$c" "$t" "$sqldir/$cqs"
    left=$(cq_count ready)
    record "$section" "$wl" claimqueue "$c" "$t" "$(( $(cq_count done) - ${hist:-0} ))" "$ceil" "$left" "$(dry_note "$left")"
}

# floor_run SECTION CLIENTS SECONDS PREFILL SCRIPT CEILING WORKLOAD: the row
# writes alone (bench/sql/schema.sql, bench_floor): PREFILL jobs made by
# enqueue_batch, moved into bench_floor as they are, then taken through their
# running and done versions by primary key. Its ratio to plain bounds what a
# claim and completion on claimqueue.jobs's schema can reach in this workload.
floor_run() {
    local section=$1 c=$2 t=$3 prefill=$4 script=$5 ceil=$6 wl=$7 left
    reset_tables
    cq_fill "$prefill"
    psqlq -c "INSERT INTO bench_floor SELECT * FROM claimqueue.jobs" -c "TRUNCATE claimqueue.jobs" \
          -c "SELECT setval('bench_floor_next', min(id), false), setval('bench_floor_batch', min(id), false) FROM bench_floor" \
          >>"$logs/reset.log" 2>&1
    settle
    pgbench_run "${wl}_floor_c${c}_sync_$sync" "$c" "$t" "$sqldir/$script"
    left=$(val "SELECT count(*) FROM bench_floor WHERE state = 'ready'")
    record "$section" "$wl" floor "$c" "$t" "$(val "SELECT count(*) FROM bench_floor WHERE state = 'done'")" \
        "$ceil" "$left" "$(dry_note "$left" "row writes alone: no search, lock or API call")"
}

# pgmq_run SECTION CLIENTS SECONDS PREFILL SCRIPT CEILING WORKLOAD NOTE: PGMQ
# (bench/sql/pgmq_*.sql), when the server has the pgmq extension: PREFILL
# messages sent with send_batch into its queue 'bench', then the script. Jobs
# done: the messages archived, or (pop) the messages gone.
pgmq_run() {
    local section=$1 c=$2 t=$3 prefill=$4 script=$5 ceil=$6 wl=$7 note=$8 left done
    [ -n "$pgmq" ] || return 0
    reset_tables
    fill_in_chunks "$prefill" pgmq.send_batch
    settle
    pgbench_run "${wl}_pgmq_c${c}_sync_$sync" "$c" "$t" "$sqldir/$script"
    left=$(val "SELECT count(*) FROM pgmq.q_bench")
    case $script in
    pgmq_pop.sql) done=$((prefill - left)) ;;
    *) done=$(val "SELECT count(*) FROM pgmq.a_bench") ;;
    esac
    record "$section" "$wl" pgmq "$c" "$t" "$done" "$ceil" "$left" "$(dry_note "$left" "$note")"
}

only_history() { [ "$mode" = history ]; }

log "(2,3) drain: $drain_prefill prefilled, claim and complete in separate transactions"
for sync in $commit_modes; do
for c in $drain_clients; do
    drain_pair drain "$c" "$t_drain" "$drain_prefill" "" cq_drain.sql plain_drain.sql commit2 drain
    only_history || floor_run drain "$c" "$t_drain" "$drain_prefill" floor_drain.sql commit2 drain
    only_history || pgmq_run drain "$c" "$t_drain" "$drain_prefill" pgmq_drain.sql commit2 drain \
        "read, then archive"
done
done
sync=on

if ! only_history; then
# --- (4) one commit per job ------------------------------------------------------
log "(4) one commit per job: claim and complete in one transaction"
for sync in $commit_modes; do
for c in $onetxn_clients; do
    drain_pair one_commit "$c" "$t_onetxn" "$drain_prefill" "" cq_onetxn.sql plain_onetxn.sql commit1 one_commit_per_job
    pgmq_run one_commit "$c" "$t_onetxn" "$drain_prefill" pgmq_pop.sql commit1 one_commit_per_job \
        "pop(): one call, the message deleted, no record kept"
done

# claimqueue alone: complete_and_dequeue(), one statement and one commit per job
# (compared with plain's one_commit_per_job above by report.sql). Each client's
# last claim is left running; only done jobs count.
log "(4b) one call per job: complete_and_dequeue() in autocommit"
for c in $onetxn_clients; do
    reset_tables
    cq_fill "$drain_prefill"; settle
    pgbench_run "one_call_per_job_claimqueue_c${c}_sync_$sync" "$c" "$t_onetxn" "$sqldir/cq_onecall.sql" -D id=0 -D attempt=0
    left=$(cq_count ready)
    record one_commit one_call_per_job claimqueue "$c" "$t_onetxn" "$(cq_count done)" commit1 "$left" "$(dry_note "$left")"
done
done
sync=on

# --- (5) batch of 100 --------------------------------------------------------------
log "(5) batch: claim 100 per transaction, complete them in one transaction"
for sync in $commit_modes; do
for c in $batch_clients; do
    drain_pair batch "$c" "$t_batch" "$batch_prefill" "" cq_batch.sql plain_batch.sql commit2 batch100
    floor_run batch "$c" "$t_batch" "$batch_prefill" floor_batch.sql commit2 batch100
    pgmq_run batch "$c" "$t_batch" "$batch_prefill" pgmq_batch.sql commit2 batch100 \
        "read 100, then archive them"
done
done
sync=on
fi

# --- full and history modes: drain with retained history --------------------------
# Durable unless BENCH_HISTORY_COMMIT_MODES says otherwise (compare a mode's rows
# with the empty-table drain of the same mode: BENCH_COMMIT_MODES).
for sync in ${BENCH_HISTORY_COMMIT_MODES:-on}; do
for h in $history; do
    log "drain with $h finished jobs retained"
    for c in ${BENCH_HISTORY_CLIENTS:-8}; do
        drain_pair history "$c" "$t_drain" "$drain_prefill" "$h" cq_drain.sql plain_drain.sql commit2 "drain_history_$h"
    done
done
done
sync=on
if only_history; then
    echo "impl,window,t_s,jobs,jobs_per_s,consumer_tps,consumer_lat_ms,producer_tps,backlog_ready,dead_tuples,table_mb" >"$windows"
fi

# --- (5b) steady state: producers below capacity, consumers keep up ------------------
# steady_probe IMPL: 2 producers offering $steady_rate jobs/s in all (pgbench -R),
# 8 consumers (the drain scripts; an empty claim loops again at once), empty
# queue at the start. Samples the ready backlog every 10 s; afterwards the
# latency of every job done, enqueue to completion (finished_at - created_at).
steady_probe() {
    local impl=$1 produce cons table state_col i=0 depths="" d="" t0 next
    if [ "$impl" = claimqueue ]; then
        produce=cq_produce.sql; cons=cq_drain.sql; table=claimqueue.jobs; state_col=state
    else
        produce=plain_produce.sql; cons=plain_drain.sql; table=bench_plain; state_col=status
    fi
    local depth_sql="SELECT count(*) FROM $table WHERE $state_col = 'ready'"
    local lat_sql="SELECT count(*),
        round(1000 * extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY finished_at - created_at))::numeric, 1),
        round(1000 * extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY finished_at - created_at))::numeric, 1)
        FROM $table WHERE $state_col = 'done'"
    log "(5b) steady, $impl: ${steady_secs}s, producers at $steady_rate jobs/s, $held_consumers consumers"
    reset_tables; settle
    local pg_secs=$((steady_secs + window / 2)) nwin=$((steady_secs / window))
    pgbench -n -M prepared -c 2 -j 1 -R "$steady_rate" -T "$pg_secs" \
        -f "$sqldir/$produce" >"$logs/steady_${impl}_producers.log" 2>&1 &
    local prod_pid=$!
    pgbench -n -M prepared -c "$held_consumers" -j "$(threads "$held_consumers")" -T "$pg_secs" \
        -f "$sqldir/$cons" >"$logs/steady_${impl}_consumers.log" 2>&1 &
    local cons_pid=$!
    t0=$(date +%s.%N)
    next=$(plus_window "$t0")
    while [ "$i" -lt "$nwin" ]; do
        sleep_until "$next"
        i=$((i + 1))
        d=$(val "$depth_sql")
        depths="${depths:+$depths }$d"
        log "  $impl steady window $i: backlog $d"
        next=$(plus_window "$next")
    done
    local rc=0
    wait "$cons_pid" || rc=$?
    wait "$prod_pid" || rc=$?
    [ "$rc" = 0 ] || { tail -5 "$logs/steady_${impl}_consumers.log" "$logs/steady_${impl}_producers.log" >&2; die "steady $impl: pgbench failed"; }
    local done p50 p99 produced behind=""
    read -r done p50 p99 < <(val "$lat_sql" | tr '|' ' ')
    # The producers may not reach the offered rate (pgbench -R falls behind
    # schedule on a loaded machine): then the row measures the producers, not
    # the queue, and says so.
    produced=$(val "SELECT count(*) FROM $table")
    behind=$(awk -v p="$produced" -v r="$steady_rate" -v t="$pg_secs" \
        'BEGIN { if (p < 0.95 * r * t) printf "PRODUCERS FELL BEHIND: %.0f of %d jobs/s offered; ", p / t, r }')
    # jobs/s = jobs done over the run (the consumers' loops include empty claims).
    LOOPS=$done; TPS=$(awk -v j="$done" -v t="$pg_secs" 'BEGIN { printf "%.1f", j / t }')
    record steady "steady_$steady_rate" "$impl" "$held_consumers" "$pg_secs" "$done" "" "$d" \
        "${behind}backlog per ${window} s: $depths; latency enqueue to done p50 $p50 ms, p99 $p99 ms"
}
if [ -n "${steady_secs:-}" ]; then
    steady_probe claimqueue
    steady_probe plain
fi

# --- (6) held-snapshot probe ---------------------------------------------------------
only_history || echo "impl,window,t_s,jobs,jobs_per_s,consumer_tps,consumer_lat_ms,producer_tps,backlog_ready,dead_tuples,table_mb" >"$windows"

held_probe() {
    local impl=$1 produce cons sample holder_pid t0 next i=0 prev_done prev_t rel
    if [ "$impl" = claimqueue ]; then
        produce=cq_produce.sql; cons=cq_drain.sql; rel=claimqueue.jobs
        sample="SELECT extract(epoch FROM now()), count(*) FILTER (WHERE state = 'ready'), count(*) FILTER (WHERE state = 'done') FROM claimqueue.jobs"
    else
        produce=plain_produce.sql; cons=plain_drain.sql; rel=bench_plain
        sample="SELECT extract(epoch FROM now()), count(*) FILTER (WHERE status = 'ready'), count(*) FILTER (WHERE status = 'done') FROM bench_plain"
    fi
    log "(6) held snapshot, $impl: ${held_secs}s, $held_producers producers, $held_consumers consumers, backlog $held_backlog"
    reset_tables
    if [ "$impl" = claimqueue ]; then cq_fill "$held_backlog"; else plain_fill "$held_backlog" >/dev/null; fi
    settle

    # The holder: a REPEATABLE READ transaction with an xid, open for the whole run.
    printf '%s\n' "SET application_name = 'bench_holder';" \
        "BEGIN ISOLATION LEVEL REPEATABLE READ;" "SELECT txid_current();" \
        "SELECT pg_sleep($((held_secs + 120)));" "COMMIT;" |
        psql -X -q -At >"$logs/held_${impl}_holder.log" 2>&1 &
    holder_pid=$!
    for _ in $(seq 100); do
        [ "$(val "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bench_holder' AND backend_xid IS NOT NULL")" = 1 ] && break
        sleep 0.1
    done
    [ "$(val "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bench_holder' AND backend_xid IS NOT NULL")" = 1 ] ||
        die "held probe: the holder has no xid"
    echo "holder xid $(val "SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'bench_holder'")" >>"$logs/held_${impl}_holder.log"

    # pgbench runs a little longer than the sampled windows, so the last window
    # never races its end.
    local nwin=$((held_secs / window)) pg_secs=$((held_secs + window / 2))
    pgbench -n -M prepared -c "$held_producers" -j 1 -T "$pg_secs" --progress=$window \
        -f "$sqldir/$produce" >"$logs/held_${impl}_producers.log" 2>&1 &
    local prod_pid=$!
    pgbench -n -M prepared -c "$held_consumers" -j "$(threads "$held_consumers")" -T "$pg_secs" --progress=$window \
        -f "$sqldir/$cons" >"$logs/held_${impl}_consumers.log" 2>&1 &
    local cons_pid=$!

    # Sample every $window s: jobs done (delta = jobs completed in the window),
    # timed by now() (the statement's start, when its snapshot was taken),
    # ready backlog, dead tuples (pgstat, lags a little), table size.
    t0=$(date +%s.%N)
    read -r prev_t _ prev_done < <(val "$sample" | tr '|' ' ')
    next=$(plus_window "$t0")
    while [ "$i" -lt "$nwin" ]; do
        sleep_until "$next"
        i=$((i + 1))
        local t ready done dead mb
        read -r t ready done < <(val "$sample" | tr '|' ' ')
        read -r dead mb < <(val "SELECT n_dead_tup, round(pg_total_relation_size('$rel') / 1048576.0) FROM pg_stat_user_tables WHERE relid = '$rel'::regclass" | tr '|' ' ')
        local jobs=$((done - prev_done)) jps
        jps=$(awk -v j="$jobs" -v a="$prev_t" -v b="$t" 'BEGIN { printf "%.1f", j / (b - a) }')
        local el
        el=$(awk -v a="$t0" -v b="$t" 'BEGIN { printf "%.0f", b - a }')
        echo "$impl,$i,$el,$jobs,$jps,,,,$ready,$dead,$mb" >>"$windows"
        log "  $impl window $i (t=${el}s): $jps jobs/s, backlog $ready, dead tuples $dead, ${mb} MB"
        prev_done=$done; prev_t=$t
        next=$(plus_window "$next")
    done
    local rc=0
    wait "$cons_pid" || rc=$?
    wait "$prod_pid" || rc=$?
    val "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bench_holder'" >/dev/null
    wait "$holder_pid" || true
    [ "$rc" = 0 ] || { tail -5 "$logs/held_${impl}_consumers.log" "$logs/held_${impl}_producers.log" >&2; die "held probe $impl: pgbench failed"; }

    # Add pgbench's own per-window figures (progress lines) to the windows.
    local tmp=$windows.tmp
    awk -F, -v OFS=, -v impl="$impl" -v cl="$logs/held_${impl}_consumers.log" -v pl="$logs/held_${impl}_producers.log" '
        BEGIN {
            # "progress: 10.0 s, 1609.0 tps, lat 4.960 ms stddev 2.1, 0 failed"
            while ((getline line < cl) > 0) if (line ~ /^progress:/) { n++; f = split(line, a, " ");
                for (k = 1; k < f; k++) { if (a[k+1] ~ /^tps/) ct[n] = a[k]; if (a[k] == "lat") lt[n] = a[k+1] } }
            while ((getline line < pl) > 0) if (line ~ /^progress:/) { m++; f = split(line, a, " ");
                for (k = 1; k < f; k++) if (a[k+1] ~ /^tps/) pt[m] = a[k] }
        }
        $1 == impl { $6 = ct[$2]; $7 = lt[$2]; $8 = pt[$2] }
        { print }' "$windows" >"$tmp" && mv "$tmp" "$windows"

    # Summary rows: the first and the last full window.
    local first last
    first=$(awk -F, -v impl="$impl" '$1 == impl && $2 == 1 { print $5 "," $9 }' "$windows")
    last=$(awk -F, -v impl="$impl" -v n="$nwin" '$1 == impl && $2 == n { print $5 "," $9 "," $3 }' "$windows")
    echo "held,on,held_first_window,$impl,$held_consumers,$window,,,,${first%%,*},,${first##*,},jobs/s in the first ${window}-s window" >>"$raw"
    echo "held,on,held_last_window,$impl,$held_consumers,$window,,,,${last%%,*},,$(echo "$last" | cut -d, -f2),jobs/s in the window ending at ${last##*,} s" >>"$raw"
}

if ! only_history; then
    held_probe claimqueue
    held_probe plain
fi

# --- report ------------------------------------------------------------------------
# Ratios and markdown are computed by SQL (bench/report.sql) in this cluster.
log "report"
# One command after another, stopping at the first that fails (windows.csv is
# rewritten last, so a failed load cannot leave it empty).
{
    psqlq -c "CREATE TABLE report_raw (ord bigserial, section text, sync text, workload text, impl text,
                  clients int, duration_s int, loops bigint, loops_per_s numeric, jobs bigint,
                  jobs_per_s numeric, ceiling_ref text, backlog_left bigint, note text)" \
          -c "CREATE TABLE report_windows (impl text, window_no int, t_s int, jobs bigint,
                  jobs_per_s numeric, consumer_tps numeric, consumer_lat_ms numeric,
                  producer_tps numeric, backlog_ready bigint, dead_tuples bigint, table_mb numeric)" \
          -c "\\copy report_raw (section, sync, workload, impl, clients, duration_s, loops, loops_per_s, jobs, jobs_per_s, ceiling_ref, backlog_left, note) FROM '$raw' CSV HEADER" \
          -c "\\copy report_windows FROM '$windows' CSV HEADER" &&
    psqlq -v mode="$mode" -v window="$window" -At -f "$here/report.sql" -o "$work/table.md" &&
    psqlq -c "\\copy (SELECT * FROM report_results ORDER BY ord) TO '$work/results.csv' CSV HEADER" &&
    psqlq -c "\\copy (SELECT * FROM report_windows ORDER BY impl, window_no) TO '$work/windows.csv' CSV HEADER"
} >"$logs/report.log" 2>&1 || { cat "$logs/report.log" >&2; die "report failed"; }
log "done"
