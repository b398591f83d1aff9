#!/usr/bin/env bash
# claimqueue's guarantees under faults on a Citus cluster (a coordinator and
# two workers on loopback, test/citus/cluster.sh), with every call made
# through the coordinator:
#
#   1. the exactly-once soak: jobs of a queue on each worker, drained by
#      consumers that claim with dequeue and finish with complete_in, while
#      the workers' client backends are terminated again and again and one
#      worker is restarted: every job done, none completed twice;
#   2. a shard move (citus_move_shard_placement) with jobs running: stale
#      finishes fenced (QC003), running jobs completed, claims continuing on
#      the new node;
#   3. a worker stopped: its queues' calls fail, the other worker's work;
#      started again, claims resume and every job is accounted for.
#
# Prints TAP-style "ok"/"not ok" lines and "tests: N passed, M failed".
#
#   bash test/citus/faults.sh     (as root the servers run as postgres)
#   CITUS_FAULT_JOBS=4000         jobs of the soak (half on each worker)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib/tap.sh
CITUS_PORTS=${CITUS_FAULT_PORTS:-57640 57641 57642}
. test/citus/cluster.sh
deadline=120
jobs_total=${CITUS_FAULT_JOBS:-4000}
consumers_per_queue=3
lease='2 seconds'

work=$(mktemp -d /tmp/claimqueue-citus-faults.XXXXXX)
bg=()
finish() {
    touch "$work/stop"
    for pid in "${bg[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    cluster_stop
    rm -rf "$work"
    echo "tests: $passed passed, $failed failed"
}
trap finish EXIT

if ! bash test/citus/build.sh --check; then
    fail "Citus is installed for this major (test/citus/build.sh)"
    exit 1
fi
if ! cluster_start; then
    fail "a coordinator and two workers start"
    exit 1
fi
ok "a coordinator and two workers start"

# Reapers every 100 ms on every node, so that expired leases come back soon.
for node in 0 1 2; do
    on "$node" "ALTER SYSTEM SET claimqueue.reaper_interval = '100ms'" >/dev/null
    on "$node" "SELECT pg_reload_conf()" >/dev/null
done
on 0 "CREATE EXTENSION claimqueue" >/dev/null
distribute() { on 0 "SET client_min_messages = warning; SELECT claimqueue.distribute(preview => true)" >/dev/null; }
check "claimqueue is distributed on the coordinator" distribute

# sqlstate N SQL: the SQLSTATE the statement fails with on node N (empty: none).
sqlstate() {
    local n=$1
    shift
    psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -d "$cq_db" \
        -c "$*" 2>&1 >/dev/null | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' | head -1
}
# shard_node QUEUE: the worker (1 or 2) holding the queue's shard.
shard_node() {
    local port n
    port=$(on 0 "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('claimqueue.jobs', '$1'::text)")
    for n in 1 2; do [ "${cq_ports[$n]}" = "$port" ] && echo "$n"; done
}
# new_queue PREFIX WORKER [OPTIONS]: creates queues PREFIX_1, PREFIX_2, ...
# until one lands on WORKER; prints its name.
new_queue() {
    local i
    for i in $(seq 1 40); do
        on 0 "SELECT create_queue('$1_$i', if_not_exists => true${3:+, $3})" >/dev/null || return 1
        [ "$(shard_node "$1_$i")" = "$2" ] && { echo "$1_$i"; return 0; }
    done
    return 1
}
# is N SQL: whether SQL's one value on node N is "t" (for until_true).
is() { test "$(on "$1" "$2" 2>/dev/null)" = t; }
# enqueue_n QUEUE FROM TO TAG: jobs {"tag": TAG, "n": FROM..TO} through the
# coordinator, in batches of 500 (enqueue_batch, delegated).
enqueue_n() {
    local q=$1 from=$2 to=$3 tag=$4 i end
    for ((i = from; i <= to; i += 500)); do
        end=$((i + 499 > to ? to : i + 499))
        on 0 "SELECT * FROM enqueue_batch('$q', ARRAY[$(seq "$i" "$end" | sed "s/.*/'{\"tag\": \"$tag\", \"n\": &}'/" | paste -sd,)]::jsonb[])" |
            wc -l
    done | awk '{s += $1} END {print s + 0}'
}

# consumer QUEUE WORKER: claims up to 5 jobs through the coordinator and
# finishes each with complete_in, until $work/stop exists. Each claim and each
# finish is a statement of its own (\gexec); a finish that succeeds prints
# "done ID ATTEMPT". One claim in 20 is left unfinished, as by a consumer
# that died: the reaper returns it when its lease expires. Errors (a lost
# connection, a stale finish) go to WORKER.err and the loop goes on.
consumer() {
    local q=$1 w=$2 out
    while [ ! -e "$work/stop" ]; do
        out=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" 2>>"$work/$w.err" <<EOF
SELECT CASE WHEN random() < 0.05 THEN 'SELECT ''left ' || id || ' ' || attempt || ' $q'''
       ELSE 'SELECT ''done ' || id || ' ' || attempt || ''' FROM complete_in(''$q'', ' || id || ', ' || attempt || ')' END
  FROM dequeue('$q', '$w', batch => 5)
\gexec
EOF
)
        [ -n "$out" ] && echo "$out" >>"$work/$w.out"
        # An empty queue (the rest running or awaiting the reaper): a pause
        # before the next claim, not a wait for anything.
        [ -z "$out" ] && sleep 0.1
    done
}

# 1. The exactly-once soak ---------------------------------------------------
soak1=$(new_queue soak 1 "lease => '$lease', max_attempts => 1000, backoff_base => '10 ms', backoff_cap => '10 ms'")
soak2=$(new_queue soak 2 "lease => '$lease', max_attempts => 1000, backoff_base => '10 ms', backoff_cap => '10 ms'")
check "a soak queue on each worker, by pg_dist_shard_placement (${soak1:-none} on 1, ${soak2:-none} on 2)" \
    test -n "$soak1" -a -n "$soak2"
half=$((jobs_total / 2))
made=$(( $(enqueue_n "$soak1" 1 "$half" soak) + $(enqueue_n "$soak2" $((half + 1)) "$jobs_total" soak) ))
check "$jobs_total jobs enqueued through the coordinator ($made)" test "$made" = "$jobs_total"
soak_done() {
    on 0 "SELECT count(*) FILTER (WHERE state = 'done') FROM claimqueue.jobs WHERE queue IN ('$soak1', '$soak2')" 2>/dev/null
}
t_soak=$SECONDS
for c in $(seq 1 $consumers_per_queue); do
    consumer "$soak1" "c1_$c" & bg+=($!)
    consumer "$soak2" "c2_$c" & bg+=($!)
done
# The faults: the workers' client backends (the coordinator's connections,
# which run the delegated calls) terminated, one worker after the other,
# every 300 ms until the soak ends.
(
    k=0
    while [ ! -e "$work/stop" ]; do
        node=$((k % 2 + 1))
        on "$node" "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid() AND query NOT LIKE '%pg_stat_activity%'" \
            >>"$work/killed" 2>/dev/null
        k=$((k + 1))
        sleep 0.3
    done
) & bg+=($!)
killer=$!
# A third of the way through, worker 2 restarts.
done_at_least() { [ "$(soak_done)" -ge "$1" ] 2>/dev/null; }
check "the consumers finish a third of the jobs" until_true done_at_least $((jobs_total / 3))
done_at_restart=$(soak_done)
check "worker 2 restarts mid-run (at $done_at_restart of $jobs_total done)" node_restart 2
deadline=240
check "every job is done through the faults" until_true done_at_least "$jobs_total"
deadline=120
touch "$work/stop"
wait "${bg[@]}" 2>/dev/null
bg=()
t_soak=$((SECONDS - t_soak))
cat "$work"/c*.out >"$work/all.out" 2>/dev/null
cat "$work"/c*.err >"$work/all.err" 2>/dev/null
killed=$(awk '{s += $1} END {print s + 0}' "$work/killed")
finishes=$(grep -c '^done ' "$work/all.out")
left=$(grep -c '^left ' "$work/all.out")
stale=$(grep -c 'QC003' "$work/all.err")
lost_conn=$(grep -cE 'connection|terminat|server closed|could not' "$work/all.err")
echo "# soak: $jobs_total jobs in $t_soak s; $killed backends terminated on the workers, worker 2 restarted;" \
     "$finishes finishes recorded, $left claims left to the reaper, $stale stale finishes (QC003), $lost_conn connection errors"
grep -E '^(ERROR|psql)' "$work/all.err" | sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -8 | sed 's/^/#   /'
check "the workers' backends were terminated during the soak ($killed)" test "$killed" -gt 0
check "0 lost: all $jobs_total jobs done, no other state, through the coordinator" \
    test "$(on 0 "SELECT count(*) || ' ' || count(*) FILTER (WHERE state = 'done') || ' ' || count(DISTINCT payload->>'n') FROM claimqueue.jobs WHERE queue IN ('$soak1', '$soak2')")" = \
         "$jobs_total $jobs_total $jobs_total"
dups=$(grep '^done ' "$work/all.out" | awk '{print $2}' | sort | uniq -d | wc -l)
check "0 duplicated: no job completed twice ($dups ids with two recorded finishes)" test "$dups" = 0
# Each recorded finish was made with the job's attempt as it stands done:
# the fencing token of the one claim that finished it.
grep '^done ' "$work/all.out" | awk '{print $2 " " $3}' | sort >"$work/finished"
on 0 "SELECT id || ' ' || attempt FROM claimqueue.jobs WHERE queue IN ('$soak1', '$soak2') AND state = 'done'" | sort >"$work/db"
wrong=$(comm -23 "$work/finished" "$work/db" | wc -l)
check "every recorded finish carried the attempt the job was done with ($finishes finishes, $wrong not)" \
    test "$wrong" = 0 -a "$finishes" -gt 0
unrecorded=$(comm -13 "$work/finished" "$work/db" | wc -l)
echo "# $unrecorded jobs done by a finish whose reply was lost with its connection"
# A claim left unfinished (a job may be left more than once, at each of
# its attempts) was returned by a reaper: the job was done at a later attempt.
unreturned=$(awk 'NR == FNR {done_at[$1] = $2; next} /^left / && !(done_at[$2] > $3) {bad++} END {print bad + 0}' \
    "$work/db" "$work/all.out")
check "the reapers returned each of the $left claims left unfinished: its job done at a later attempt ($unreturned not)" \
    test "$unreturned" = 0
# The claims left unfinished, finished now: each job is done under a later
# attempt, and every such finish is fenced.
awk '/^left /{print "SELECT complete_in('"'"'" $4 "'"'"', " $2 ", " $3 ");"}' "$work/all.out" >"$work/late.sql"
late=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" -f "$work/late.sql" 2>&1 |
    grep -oE 'ERROR:  [0-9A-Z]{5}:' | cut -c9-13 | sort | uniq -c | awk '{print $1 "x" $2}' | paste -sd' ')
check "a late finish of each of the $left claims left unfinished gets QC003 (${late:-none})" \
    test "$late" = "${left}xQC003" -o "$left$late" = 0
check "nothing is left to claim" \
    test "$(on 0 "SELECT count(*) FROM dequeue('$soak1', 'w', batch => 10)")$(on 0 "SELECT count(*) FROM dequeue('$soak2', 'w', batch => 10)")" = 00

# 2. A shard move with jobs running ------------------------------------------
mv=$(new_queue move 1 "lease => '1 hour', max_attempts => 1000, backoff_base => '10 ms', backoff_cap => '10 ms'")
check "a queue on worker 1 to move (${mv:-none})" test -n "$mv"
check "20 jobs enqueued into it" test "$(enqueue_n "$mv" 1 20 move)" = 20
# Five claims whose lease will expire, five that keep theirs.
on 0 "SELECT id || ' ' || attempt FROM dequeue('$mv', 'short', batch => 5, lease => '2 seconds')" >"$work/short"
on 0 "SELECT id || ' ' || attempt FROM dequeue('$mv', 'long', batch => 5)" >"$work/long"
check "10 jobs running before the move" test "$(cat "$work/short" "$work/long" | wc -l)" = 10
shard=$(on 0 "SELECT get_shard_id_for_distribution_column('claimqueue.jobs', '$mv'::text)")
host=$(on 0 "SELECT nodename FROM pg_dist_node WHERE nodeport = ${cq_ports[1]}")
on 0 "SELECT citus_move_shard_placement($shard, '$host', ${cq_ports[1]}, '$host', ${cq_ports[2]}, shard_transfer_mode => 'block_writes')" >/dev/null
check "the queue's shard moves to worker 2 with its jobs running (block_writes)" \
    test "$(shard_node "$mv")" = 2
check "its 20 jobs are all there, 10 running" \
    test "$(on 0 "SELECT count(*) || ' ' || count(*) FILTER (WHERE state = 'running') FROM claimqueue.jobs WHERE queue = '$mv'")" = "20 10"
ids_short=$(awk '{print $1}' "$work/short" | paste -sd,)
# Returned and claimable again (a claim position drawn, after the retry's
# backoff): nothing changes them until the next claim.
check "worker 2's reaper returns the 5 expired leases" \
    until_true is 2 "SELECT count(*) = 5 FROM claimqueue.jobs_$shard WHERE id IN ($ids_short) AND state = 'ready' AND attempt = 1 AND pos IS NOT NULL"
before=$(on 0 "SELECT md5(string_agg(j::text, '|' ORDER BY id)) FROM claimqueue.jobs j WHERE queue = '$mv'")
codes=$(while read -r id attempt; do sqlstate 0 "SELECT complete_in('$mv', $id, $attempt)"; done <"$work/short" | sort | uniq -c | awk '{print $1 "x" $2}')
check "their stale finishes through the coordinator get QC003 ($codes), nothing changed" \
    test "$codes $(on 0 "SELECT md5(string_agg(j::text, '|' ORDER BY id)) FROM claimqueue.jobs j WHERE queue = '$mv'")" = "5xQC003 $before"
finished=0
while read -r id attempt; do
    on 0 "SELECT complete_in('$mv', $id, $attempt)" >/dev/null && finished=$((finished + 1))
done <"$work/long"
check "the 5 jobs still leased complete on the new node ($finished)" test "$finished" = 5
got=$(psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" <<EOF | wc -l
SELECT 'SELECT ''' || id || ''' FROM complete_in(''$mv'', ' || id || ', ' || attempt || ')' FROM dequeue('$mv', 'after', batch => 100)
\gexec
EOF
)
check "claims continue on the new node: the other 15 claimed and completed ($got)" test "$got" = 15
check "all 20 done, each once (attempt 2 for the 5 reaped, 1 for the others)" \
    test "$(on 0 "SELECT count(*) FILTER (WHERE state = 'done') || ' ' || count(DISTINCT payload->>'n') || ' ' || count(*) FILTER (WHERE attempt = 2) FROM claimqueue.jobs WHERE queue = '$mv'")" = "20 20 5"
qid=$(on 0 "SELECT queue_id FROM claimqueue.queues WHERE name = '$mv'")
check "worker 2 has a claim lane of the queue (claim cursors rebuilt there)" \
    test "$(on 2 "SELECT count(*) > 0 FROM claimqueue.claim_cursors() WHERE queue_id = $qid")" = t
broken=$(on 2 "SELECT count(*) FROM claimqueue.check_claim_cursors()" 2>&1)
check "its cursors' invariants hold on worker 2 ($broken broken)" test "$broken" = 0

# 3. A worker stopped ----------------------------------------------------------
check "10 jobs enqueued into each soak queue" \
    test "$(enqueue_n "$soak1" 1 10 down)$(enqueue_n "$soak2" 1 10 down)" = 1010
held2=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$soak2', 'before', lease => '1 hour')")
check "worker 2 stops" node_stop 2
err=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" \
    -c "SELECT enqueue('$soak2', '{\"tag\": \"refused\"}')" 2>&1 >/dev/null)
code=$(sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' <<<"$err" | head -1)
echo "# enqueue into the stopped worker's queue: $(head -1 <<<"$err")"
check "an enqueue into its queue through the coordinator fails ($code)" test -n "$code"
codes="$(sqlstate 0 "SELECT * FROM dequeue('$soak2', 'w')") $(sqlstate 0 "SELECT complete_in('$soak2', ${held2% *}, ${held2#* })")"
check "so do a claim and a finish there ($codes), with the same SQLSTATE" test "$codes" = "$code $code"
got=$(psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" <<EOF | wc -l
SELECT 'SELECT ''' || id || ''' FROM complete_in(''$soak1'', ' || id || ', ' || attempt || ')' FROM dequeue('$soak1', 'up', batch => 100)
\gexec
EOF
)
check "worker 1's queue works meanwhile: its 10 jobs claimed and completed ($got)" test "$got" = 10
check "and it takes new jobs" test "$(enqueue_n "$soak1" 11 12 down)" = 2
check "worker 2 starts again" node_start 2
check "claims resume on worker 2 through the coordinator" \
    until_true is 0 "SELECT count(*) = 9 FROM dequeue('$soak2', 'back', batch => 100, lease => '1 hour')"
finished=0
for j in $(on 0 "SELECT id || ':' || attempt FROM claimqueue.jobs WHERE queue = '$soak2' AND state = 'running'"); do
    on 0 "SELECT complete_in('$soak2', ${j%:*}, ${j#*:})" >/dev/null && finished=$((finished + 1))
done
check "the claim made before the stop completes after it, with the others ($finished)" test "$finished" = 10
got=$(psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" <<EOF | wc -l
SELECT 'SELECT ''' || id || ''' FROM complete_in(''$soak1'', ' || id || ', ' || attempt || ')' FROM dequeue('$soak1', 'up', batch => 100)
\gexec
EOF
)
check "every job is accounted for: 12 and 10 done, the refused enqueue absent" \
    test "$got $(on 0 "SELECT count(*) FILTER (WHERE state = 'done') || '/' || count(*) FROM claimqueue.jobs WHERE queue = '$soak1' AND payload->>'tag' = 'down'") $(on 0 "SELECT count(*) FILTER (WHERE state = 'done') || '/' || count(*) FROM claimqueue.jobs WHERE queue = '$soak2' AND payload->>'tag' IN ('down', 'refused')")" = \
         "2 12/12 10/10"
