#!/usr/bin/env bash
# claimqueue on a Citus cluster: a coordinator and two workers on loopback
# (test/citus/cluster.sh), with Citus built from its source tarball by
# test/citus/build.sh. Prints TAP-style "ok"/"not ok" lines and
# "tests: N passed, M failed".
#
#   bash test/citus/run.sh     (as root the servers run as postgres)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib/tap.sh
. test/citus/cluster.sh
deadline=60

finish() {
    cluster_stop
    echo "tests: $passed passed, $failed failed"
}
trap finish EXIT

if ! bash test/citus/build.sh --check; then
    fail "Citus is installed for this major (test/citus/build.sh)"
    exit 1
fi
if ! cluster_start; then
    fail "a coordinator and two workers start with shared_preload_libraries = 'citus,claimqueue'"
    exit 1
fi
ok "a coordinator and two workers start with shared_preload_libraries = 'citus,claimqueue'"

check "the coordinator lists both workers as active primaries" \
    test "$(on 0 "SELECT count(*) FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND nodeport <> ${cq_ports[0]}")" = 2
version=$(on 0 "SELECT extversion FROM pg_extension WHERE extname = 'citus'")
check "Citus $version runs on every node" \
    test "$(for n in 1 2; do on "$n" "SELECT extversion FROM pg_extension WHERE extname = 'citus'"; done | sort -u)" = "$version"

on 0 "CREATE EXTENSION claimqueue" >/dev/null
cq_version=$(on 0 "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'")
check "CREATE EXTENSION claimqueue on the coordinator reaches both workers ($cq_version)" \
    test "$(for n in 1 2; do on "$n" "SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'"; done | sort -u)" = "$cq_version"

# Before distribute(), the queue works on the coordinator as on one server:
# its tables are local there.
on 0 "SELECT create_queue('local_q')" >/dev/null
on 0 "SELECT enqueue('local_q', jsonb_build_object('n', n)) FROM generate_series(1, 3) n" >/dev/null
claimed=$(on 0 "SELECT count(complete(id, attempt)) FROM dequeue('local_q', 'w1', batch => 3)")
check "on the coordinator, 3 jobs enqueued are claimed and completed ($claimed)" test "$claimed" = 3
check "the coordinator's jobs are local: none reached a worker" \
    test "$(on 1 "SELECT count(*) FROM claimqueue.jobs")$(on 2 "SELECT count(*) FROM claimqueue.jobs")" = 00

# Distributing claimqueue's tables by hand is refused (docs/citus.md), and
# the refusals change nothing: no Citus table, the same rows, a queue that
# still works.
digest() { on 0 "SELECT md5(string_agg(j::text, '|' ORDER BY j.id)) FROM claimqueue.jobs j"; }
on 0 "SELECT enqueue('local_q', '{\"kept\": true}')" >/dev/null
before=$(digest)
err=$(on 0 "SELECT create_reference_table('claimqueue.queues')" 2>&1)
check "create_reference_table('claimqueue.queues') is refused: it has triggers" \
    grep -q 'cannot distribute relation "queues" because it has triggers' <<<"$err"
err=$(on 0 "SELECT create_distributed_table('claimqueue.jobs', 'queue_id')" 2>&1)
check "create_distributed_table('claimqueue.jobs', 'queue_id') is refused: its primary key lacks queue_id" \
    grep -q 'cannot create constraint on "jobs"' <<<"$err"
check "none of claimqueue's tables became a Citus table" \
    test "$(on 0 "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'claimqueue.%'")" = 0
check "the jobs are as they were" test "$(digest)" = "$before"
claimed=$(on 0 "SELECT count(complete(id, attempt)) FROM dequeue('local_q', 'w1')")
check "the queue still claims and completes on the coordinator" test "$claimed" = 1

# claimqueue.distribute() -------------------------------------------------
# sqlstate N SQL: the SQLSTATE the statement fails with on node N (empty: none).
sqlstate() {
    local n=$1
    shift
    psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -d "${cq_on_db:-$cq_db}" \
        -c "$*" 2>&1 >/dev/null | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' | head -1
}
distributed_tables() {
    on 0 "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'claimqueue.%'"
}
# Every job and queue row, in one digest, read through the coordinator.
# (The column queue that distribute() adds, the distribution column, is left out.)
everything() {
    on 0 "SELECT count(*) || ' ' || md5(string_agg((to_jsonb(j) - 'queue')::text, '|' ORDER BY j.id)) FROM claimqueue.jobs j"
    on 0 "SELECT md5(string_agg(q::text, '|' ORDER BY q.queue_id)) FROM claimqueue.queues q"
}

# Without Citus in the database: refused (55000), nothing changed.
psql -qX -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d postgres -c "CREATE DATABASE cq_no_citus" >/dev/null
cq_on_db=cq_no_citus sqlstate 0 "CREATE EXTENSION claimqueue" >/dev/null
code=$(cq_on_db=cq_no_citus sqlstate 0 "SELECT claimqueue.distribute()")
check "distribute() without the citus extension is refused with 55000 ($code)" test "$code" = 55000

# On a worker: refused (55000).
code=$(sqlstate 1 "SELECT claimqueue.distribute()")
check "distribute() on a worker is refused with 55000 ($code)" test "$code" = 55000

# Roles whose oids differ between the nodes: a role the coordinator never
# sees, made on each worker first, shifts every later role's oid there.
on 1 "SET citus.enable_ddl_propagation = off; CREATE ROLE cq_shift_1; CREATE ROLE cq_shift_2" >/dev/null
on 2 "SET citus.enable_ddl_propagation = off; CREATE ROLE cq_shift_3" >/dev/null
on 0 "CREATE ROLE cq_grant_before LOGIN IN ROLE claimqueue_producer, claimqueue_consumer" >/dev/null
on 0 "CREATE ROLE cq_grant_after LOGIN IN ROLE claimqueue_producer, claimqueue_consumer" >/dev/null
on 0 "CREATE ROLE cq_grant_none LOGIN IN ROLE claimqueue_producer, claimqueue_consumer" >/dev/null
on 0 "SELECT create_queue('granted')" >/dev/null
on 0 "SELECT grant_queue('granted', p, 'cq_grant_before') FROM unnest(ARRAY['produce', 'consume']) p" >/dev/null

# Two queues and their jobs, one of them running: refused (55006), nothing changed.
on 0 "SELECT create_queue('mail'), create_queue('sms')" >/dev/null
on 0 "SELECT grant_queue('mail', 'consume', 'claimqueue_consumer')" >/dev/null
on 0 "CREATE ROLE cq_citus_producer LOGIN IN ROLE claimqueue_producer" >/dev/null
on 0 "SELECT grant_queue('mail', 'produce', 'cq_citus_producer')" >/dev/null
on 0 "SELECT enqueue(q, jsonb_build_object('n', n)) FROM generate_series(1, 40) n, unnest(ARRAY['mail', 'sms', 'local_q']) q" >/dev/null
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('mail', 'w1')")
before=$(everything)
code=$(sqlstate 0 "SELECT claimqueue.distribute()")
check "distribute() without preview => true is refused with 0A000 ($code)" test "$code" = 0A000
check "that refusal changed nothing: no Citus table, the same rows" \
    test "$(distributed_tables) $(everything)" = "0 $before"
code=$(sqlstate 0 "SELECT claimqueue.distribute(preview => true)")
check "distribute() while a job runs is refused with 55006 ($code)" test "$code" = 55006
check "the refusal changed nothing: no Citus table, the same rows" \
    test "$(distributed_tables) $(everything)" = "0 $before"
on 0 "SELECT complete(${held% *}, ${held#* })" >/dev/null

before=$(everything)
jobs_before=$(on 0 "SELECT count(*) FROM claimqueue.jobs")
out=$(on 0 "SET client_min_messages = warning; SELECT claimqueue.distribute(preview => true)" 2>&1)
check "distribute() on the coordinator succeeds" test $? = 0
[ -n "$out" ] && sed 's/^/# /' <<<"$out"
check "jobs is distributed (by the queue's name), the queue definitions are reference tables" \
    test "$(on 0 "SELECT string_agg(logicalrelid::regclass::text || '=' || partmethod::text, ' ' ORDER BY logicalrelid::regclass::text) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'claimqueue.%'")" = \
         "claimqueue.jobs=h claimqueue.queue_grants=n claimqueue.queue_samples=n claimqueue.queues=n claimqueue.schedules=n"
check "every job and queue row is there after it ($jobs_before jobs, count and md5 equal)" \
    test "$(everything)" = "$before"
on_workers=$(( $(on 0 "SELECT sum(result::bigint) FROM run_command_on_shards('claimqueue.jobs', 'SELECT count(*) FROM %s')") ))
check "the jobs live in the shards ($on_workers of $jobs_before)" test "$on_workers" = "$jobs_before"
check "the shards are on both workers" \
    test "$(on 0 "SELECT count(DISTINCT p.groupid) FROM pg_dist_placement p JOIN pg_dist_shard s USING (shardid) WHERE s.logicalrelid = 'claimqueue.jobs'::regclass AND p.groupid > 0")" = 2
check "the coordinator's own tables underneath are emptied" \
    test "$(on 0 "SELECT sum(pg_relation_size(t)) FROM unnest(ARRAY['claimqueue.jobs', 'claimqueue.queues']::regclass[]) t")" = 0
check "a worker reads the queue definitions (reference table): $(on 0 "SELECT count(*) FROM claimqueue.queues") queues" \
    test "$(on 1 "SELECT count(*) FROM claimqueue.queues")" = "$(on 0 "SELECT count(*) FROM claimqueue.queues")"
check "grants reach the workers too" \
    test "$(on 2 "SELECT count(*) FROM claimqueue.queue_grants g JOIN claimqueue.queues q USING (queue_id) WHERE q.name = 'mail'")" = 2
ranges=""
for node in 1 2; do
    ranges="$ranges $(on "$node" "SELECT (min_value = (groupid::bigint << 48) + 1 AND max_value = ((groupid::bigint + 1) << 48) - 1)::text FROM pg_sequences, pg_dist_local_group WHERE schemaname = 'claimqueue' AND sequencename = 'jobs_id_seq'")"
done
check "each worker draws job ids from its own range, group id x 2^48 on ($ranges )" test "$ranges" = " true true"
check "the coordinator's ids stay below 2^48" \
    test "$(on 0 "SELECT max_value FROM pg_sequences WHERE schemaname = 'claimqueue' AND sequencename = 'jobs_id_seq'")" = 281474976710655
out=$(on 0 "SET client_min_messages = notice; SELECT claimqueue.distribute(preview => true)" 2>&1)
check "a second distribute() changes nothing and says so" \
    test "$(grep -c 'distributed already' <<<"$out") $(everything)" = "1 $before"
# A worker whose sequence starts at 1 again, as a worker added later has it:
# another call gives it its range.
on 2 "SET citus.enable_ddl_propagation = off; ALTER SEQUENCE claimqueue.jobs_id_seq MINVALUE 1 MAXVALUE 9223372036854775807 RESTART 1" >/dev/null
on 0 "SET client_min_messages = warning; SELECT claimqueue.distribute(preview => true)" >/dev/null
check "a later call gives a worker without one its id range" \
    test "$(on 2 "SELECT min_value = (groupid::bigint << 48) + 1 FROM pg_sequences, pg_dist_local_group WHERE schemaname = 'claimqueue' AND sequencename = 'jobs_id_seq'")" = t
check "jobs is distributed by its column queue, filled with every job's queue name" \
    test "$(on 0 "SELECT column_to_column_name(logicalrelid, partkey) FROM pg_dist_partition WHERE logicalrelid = 'claimqueue.jobs'::regclass") $(on 0 "SELECT count(*) FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id) WHERE j.queue = q.name")" = "queue $jobs_before"
# The node index (1 or 2) of the worker holding queue $1's shard.
shard_node() {
    local port
    port=$(on 0 "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('claimqueue.jobs', '$1'::text)")
    for n in 1 2; do [ "${cq_ports[$n]}" = "$port" ] && echo "$n"; done
}
# A worker has Citus's metadata too: a call made on the worker without the
# queue's shard is delegated to the one with it.
got=$(on $((3 - $(shard_node mail))) "SELECT count(*) FROM dequeue('mail', 'w1', batch => 2)")
check "a claim on the worker without the queue's shard is delegated to the one with it ($got)" test "$got" = 2
for j in $(on 0 "SELECT id || ':' || attempt FROM claimqueue.jobs WHERE queue = 'mail' AND state = 'running'"); do
    on 0 "SELECT complete_in('mail', ${j%:*}, ${j#*:})" >/dev/null
done
before=$(everything)
# A grant revoked through the coordinator changes the shards of the
# reference table, whose trigger invalidates the table itself: a session that
# remembered the grant forgets it at once (42501 where the grant let the call
# reach the hot path's 0A000: a call that is not the query's top is not
# delegated, and runs on the coordinator).
codes=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" \
    -c "SET ROLE cq_citus_producer" -c "SELECT enqueue('mail', '{}') FROM generate_series(1, 1)" -c "RESET ROLE" \
    -c "SELECT revoke_queue('mail', 'produce', 'cq_citus_producer')" \
    -c "SET ROLE cq_citus_producer" -c "SELECT enqueue('mail', '{}') FROM generate_series(1, 1)" 2>&1 >/dev/null |
    sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' | tr '\n' ' ')
check "a session forgets a grant revoked on the reference table's shards ($codes)" test "$codes" = "0A000 42501 "

# Grants by roles that are not superusers, checked on the worker that holds
# the queue: a role's oid differs from node to node, and each node checks
# the grant by the grantee's name.
role_oids() { for n in 0 1 2; do on $n "SELECT oid FROM pg_roles WHERE rolname = '$1'"; done | tr '\n' ' '; }
oids=$(role_oids cq_grant_before)
check "the roles' oids differ between the nodes ($oids)" \
    test "$(tr ' ' '\n' <<<"$oids" | sed '/^$/d' | sort -u | wc -l)" = 3
# as ROLE SQL: the result of SQL, or the SQLSTATE it fails with, logged in
# as ROLE on the coordinator.
as() {
    local role=$1 out
    shift
    out=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U "$role" -d "$cq_db" -c "$*" 2>&1)
    if grep -q '^ERROR:' <<<"$out"; then
        sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' <<<"$out" | head -1
    else
        head -1 <<<"$out"
    fi
}
g=$(shard_node granted)
lo=$((1 << 48))
check "grant_queue on the coordinator after distribute()" \
    test "$(on 0 "SELECT grant_queue('granted', 'produce', 'cq_grant_after')")" = t
id_before=$(as cq_grant_before "SELECT enqueue('granted', '{}')")
id_after=$(as cq_grant_after "SELECT enqueue('granted', '{}')")
check "a role granted before distribute() enqueues through the coordinator, on the worker ($id_before)" \
    test "${id_before:-0}" -gt "$lo" 2>/dev/null
check "so does a role granted after it ($id_after)" test "${id_after:-0}" -gt "$lo" 2>/dev/null
check "and claims there with its consume grant" \
    test "$(as cq_grant_before "SELECT id FROM dequeue('granted', 'w1')")" = "$id_before"
code=$(as cq_grant_none "SELECT enqueue('granted', '{}')")
check "a role without a grant gets 42501 ($code)" test "$code" = 42501
code=$(as cq_grant_after "SELECT * FROM dequeue('granted', 'w1')")
check "a produce grant does not let it claim: 42501 ($code)" test "$code" = 42501
on 0 "SELECT revoke_queue('granted', 'produce', 'cq_grant_after')" >/dev/null
code=$(as cq_grant_after "SELECT enqueue('granted', '{}')")
check "a revoke takes effect on the worker: 42501 ($code)" test "$code" = 42501
check "the worker holds the two jobs enqueued" \
    test "$(on "$g" "SELECT count(*) FROM claimqueue.jobs WHERE queue = 'granted'")" = 2

# job_status and drop_queue on the coordinator, whose statements Citus plans
# for each call's values.
statuses="SELECT string_agg(coalesce(state::text, '-'), ' ' ORDER BY n) FROM job_status(ARRAY[$id_before, $id_after, 999999999]::bigint[]) WITH ORDINALITY s(id, state, attempt, result, last_error, n)"
got=$(on 0 "$statuses")
check "job_status on the coordinator reads the jobs on the worker ($got)" test "$got" = "running ready -"
got=$(as cq_grant_before "$statuses")
check "a role granted the queue sees them too ($got)" test "$got" = "running ready -"
got=$(as cq_grant_none "$statuses")
check "one without a grant sees none ($got)" test "$got" = "- - -"
# job_errors on the coordinator: the claimed job fails once (a delegated
# fail_in), and its history is read from the worker.
on 0 "SELECT fail_in('granted', $id_before, 1, 'boom')" >/dev/null
got=$(on 0 "SELECT string_agg(attempt || ':' || error, ' ') FROM job_errors($id_before)")
check "job_errors on the coordinator reads the job's history on the worker ($got)" test "$got" = "1:boom"
got=$(as cq_grant_before "SELECT count(*) FROM job_errors($id_before)")
got="$got $(as cq_grant_none "SELECT count(*) FROM job_errors($id_before)")"
check "the granted role reads it, one without a grant reads nothing ($got)" test "$got" = "1 0"
others="SELECT count(*) || ' ' || md5(string_agg((to_jsonb(j) - 'queue')::text, '|' ORDER BY j.id)) FROM claimqueue.jobs j WHERE queue <> 'granted'"
before=$(on 0 "$others")
code=$(sqlstate 0 "SELECT drop_queue('granted')")
check "drop_queue on the coordinator refuses a queue with ready or running jobs: 55006 ($code)" \
    test "$code $(on "$g" "SELECT count(*) FROM claimqueue.jobs WHERE queue = 'granted'")" = "55006 2"
got=$(on 0 "SELECT drop_queue('granted', force => true)")
check "drop_queue(force => true) on the coordinator deletes its 2 jobs ($got)" test "$got" = 2
check "the queue and its jobs are gone on the worker, its grants on every node" \
    test "$(on "$g" "SELECT count(*) FROM claimqueue.jobs WHERE queue = 'granted'") $(on "$g" "SELECT count(*) FROM claimqueue.queues WHERE name = 'granted'") $(on 1 "SELECT count(*) FROM claimqueue.queue_grants WHERE grantee_name LIKE 'cq_grant_%'") $(on 2 "SELECT count(*) FROM claimqueue.queue_grants WHERE grantee_name LIKE 'cq_grant_%'")" = "0 0 0 0"
check "every other queue's jobs are kept (count and md5)" test "$(on 0 "$others")" = "$before"

# On a worker: the hot path on the local shard ------------------------------
# A call made on the worker that holds a queue's shard runs the single-row
# path on that shard (its indexes are the table's, named "_<shard id>"), as
# on one server; on the other worker it is refused with QC007, naming the
# queue and the node.
on 0 "SELECT create_queue('citus_a')" >/dev/null
a=$(shard_node citus_a)
b=$((3 - a))
qa=$(on 0 "SELECT queue_id FROM claimqueue.queues WHERE name = 'citus_a'")
claims=$(mktemp -d)
n_jobs=300
made=$(on "$a" "SELECT count(*) FILTER (WHERE id > (SELECT groupid::bigint << 48 FROM pg_dist_local_group)) FROM (SELECT enqueue('citus_a', jsonb_build_object('n', n)) AS id FROM generate_series(1, $n_jobs) n) e")
check "on the worker holding its shard, $n_jobs jobs are enqueued with that worker's ids ($made)" \
    test "$made" = "$n_jobs"
check "they are in the queue's shard, read through the coordinator" \
    test "$(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $qa AND state = 'ready'")" = "$n_jobs"
# Claimed in batches by two sessions at once, each completing what it claimed.
for w in w1 w2; do
    (for round in $(seq 1 20); do
        on "$a" "SELECT id || ' ' || attempt || ' ' || complete(id, attempt)::text FROM dequeue('citus_a', '$w', batch => 25)"
    done >"$claims/$w" 2>"$claims/$w.err") &
done
wait
check "no claim or completion failed ($(cat "$claims"/*.err | head -1))" test ! -s "$claims/w1.err" -a ! -s "$claims/w2.err"
done_ids=$(cat "$claims/w1" "$claims/w2" | awk '{print $1}' | sort)
check "two sessions on the worker claim and complete all $n_jobs jobs ($(wc -l <<<"$done_ids") completions)" \
    test "$(wc -l <<<"$done_ids")" = "$n_jobs"
check "each exactly once ($(sort -u <<<"$done_ids" | wc -l) distinct ids)" \
    test "$(sort -u <<<"$done_ids" | wc -l)" = "$n_jobs"
check "the coordinator counts them done in the shard" \
    test "$(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE state = 'done' AND queue_id = $qa")" = "$n_jobs"
check "nothing is left to claim" test "$(on "$a" "SELECT count(*) FROM dequeue('citus_a', 'w1', batch => 10)")" = 0
one=$(head -1 "$claims/w1")
code=$(sqlstate "$a" "SELECT complete(${one%% *}, $(awk '{print $2}' <<<"$one"))")
check "a stale finish on the worker still gets QC003 ($code)" test "$code" = QC003
# fail, heartbeat and complete_batch find the job's shard by its id.
on "$a" "SELECT enqueue('citus_a', '{\"again\": true}')" >/dev/null
held=$(on "$a" "SELECT id || ' ' || attempt FROM dequeue('citus_a', 'w1')")
on "$a" "SELECT heartbeat(${held% *}, ${held#* })" >/dev/null
state=$(on "$a" "SELECT fail(${held% *}, ${held#* }, 'boom', retry_in => '0 s')")
held2=$(on "$a" "SELECT id || ' ' || attempt FROM dequeue('citus_a', 'w1')")
check "heartbeat and fail on the worker; the job comes back as attempt 2 ($state, $held2)" \
    test "$state $held2" = "ready ${held% *} 2"
code=$(sqlstate "$b" "SELECT complete(${held2% *}, 2)")
check "a finish on the other worker is refused with QC007 ($code)" test "$code" = QC007
on "$a" "SELECT complete_batch(ARRAY[${held2% *}]::bigint[], ARRAY[2])" >/dev/null
check "complete_batch finishes it on the worker" \
    test "$(on 0 "SELECT state FROM claimqueue.jobs WHERE id = ${held2% *}")" = done
# enqueue_batch, snooze and complete_and_dequeue on the worker.
on "$a" "SELECT count(*) FROM enqueue_batch('citus_a', ARRAY['{\"b\": 1}', '{\"b\": 2}']::jsonb[])" >/dev/null
held=$(on "$a" "SELECT id || ' ' || attempt FROM dequeue('citus_a', 'w1')")
on "$a" "SELECT snooze(${held% *}, ${held#* })" >/dev/null
got=$(on "$a" "SELECT count(*) FROM dequeue('citus_a', 'w1', batch => 5)")
check "enqueue_batch and snooze on the worker: both jobs claimable again ($got)" test "$got" = 2
ids=$(on 0 "SELECT string_agg(id::text, ',') FROM claimqueue.jobs WHERE queue_id = $qa AND state = 'running'")
first=${ids%%,*}
next=$(on "$a" "SELECT id FROM complete_and_dequeue($first, (SELECT attempt FROM claimqueue.jobs_$(on 0 "SELECT get_shard_id_for_distribution_column('claimqueue.jobs', 'citus_a'::text)") WHERE id = $first), 'citus_a', 'w1')")
on "$a" "SELECT complete_batch(array_agg(id), array_agg(attempt)) FROM claimqueue.jobs_$(on 0 "SELECT get_shard_id_for_distribution_column('claimqueue.jobs', 'citus_a'::text)") WHERE state = 'running' AND queue_id = $qa" >/dev/null
check "complete_and_dequeue on the worker finishes one and claims none left (${next:-none}); all done" \
    test "${next:-none} $(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $qa AND state <> 'done'")" = "none 0"
# The hot path refuses a queue whose shard is elsewhere (QC007) when Citus
# does not delegate the call: here, a call that is not the query's top
# (SELECT fn(...) or SELECT ... FROM fn(...) alone are delegated).
before=$(everything)
err=$(on "$b" "SELECT enqueue('citus_a', '{}') FROM generate_series(1, 1)" 2>&1)
code=$(sqlstate "$b" "SELECT enqueue('citus_a', '{}') FROM generate_series(1, 1)")
check "enqueue on the other worker, not delegated, is refused with QC007 ($code)" test "$code" = QC007
check "its message names the queue and the node" \
    grep -q "queue \"citus_a\" is not on this node (Citus group [0-9]*, port ${cq_ports[$b]})" <<<"$err"
code=$(sqlstate "$b" "SELECT count(*) FROM dequeue('citus_a', 'w1'), generate_series(1, 1)")
check "so is a claim there ($code), and nothing was written" \
    test "$code $(everything)" = "QC007 $before"
# The cost of finding a job's shard by its id (16 shards per worker), against
# one server (the database without Citus on the coordinator): printed, not
# asserted. per_call_ms NODE DB N SQL: psql's \timing of SQL, over N calls.
per_call_ms() {
    psql -qXAt -h 127.0.0.1 -p "${cq_ports[$1]}" -U postgres -d "$2" -c '\timing on' -c "$4" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk -v n="$3" '{printf "%.4f", $1 / n}'
}
on "$a" "SELECT enqueue('citus_a', '{}')" >/dev/null
held=$(on "$a" "SELECT id || ' ' || attempt FROM dequeue('citus_a', 'w1')")
cq_on_db=cq_no_citus sqlstate 0 "SELECT create_queue('one_server')" >/dev/null
psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d cq_no_citus -c "SELECT enqueue('one_server', '{}')" >/dev/null
held1=$(psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d cq_no_citus -c "SELECT id || ' ' || attempt FROM dequeue('one_server', 'w1')")
# A second queue on the same worker in another shard: heartbeats alternating
# between its job and citus_a's miss the shard asked first every time.
shard_of() { on 0 "SELECT get_shard_id_for_distribution_column('claimqueue.jobs', '$1'::text)"; }
for i in $(seq 1 12); do
    on 0 "SELECT create_queue('citus_c$i')" >/dev/null
    if [ "$(shard_node "citus_c$i")" = "$a" ] && [ "$(shard_of "citus_c$i")" != "$(shard_of citus_a)" ]; then
        other_q=citus_c$i
        break
    fi
done
on "$a" "SELECT enqueue('${other_q:-citus_a}', '{}')" >/dev/null
held_c=$(on "$a" "SELECT id || ' ' || attempt FROM dequeue('${other_q:-citus_a}', 'w1')")
shards=$(on "$a" "SELECT count(*) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) WHERE s.logicalrelid = 'claimqueue.jobs'::regclass AND p.groupid = (SELECT groupid FROM pg_dist_local_group)")
for round in 1 2; do
    echo "# heartbeat, 2000 calls in one statement: on the worker (its job found among $shards local shards)" \
         "$(per_call_ms "$a" "$cq_db" 2000 "SELECT count(heartbeat(${held% *}, ${held#* })) FROM generate_series(1, 2000)") ms per call;" \
         "one server $(per_call_ms 0 cq_no_citus 2000 "SELECT count(heartbeat(${held1% *}, ${held1#* })) FROM generate_series(1, 2000)") ms"
    echo "# heartbeat alternating between jobs of two shards (${other_q:-none found}), 2000 calls:" \
         "$(per_call_ms "$a" "$cq_db" 2000 "SELECT count(heartbeat(CASE WHEN g % 2 = 0 THEN ${held% *} ELSE ${held_c% *} END, CASE WHEN g % 2 = 0 THEN ${held#* } ELSE ${held_c#* } END)) FROM generate_series(1, 2000) g") ms per call"
    echo "# enqueue, 2000 calls in one statement: on the worker" \
         "$(per_call_ms "$a" "$cq_db" 2000 "SELECT count(enqueue('citus_a', '{}')) FROM generate_series(1, 2000)") ms per call;" \
         "one server $(per_call_ms 0 cq_no_citus 2000 "SELECT count(enqueue('one_server', '{}')) FROM generate_series(1, 2000)") ms"
done
on "$a" "SELECT complete(${held% *}, ${held#* }), complete(${held_c% *}, ${held_c#* })" >/dev/null
rm -rf "$claims"

# A shard move: a session on the worker that held the queue remembered its
# shard; Citus's change of the placement makes it forget it (QC007 there),
# and the queue works on the worker it moved to.
fifo_dir=$(mktemp -d)
chmod 755 "$fifo_dir"
mkfifo "$fifo_dir/in"
psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[$a]}" -U postgres -d "$cq_db" \
    <"$fifo_dir/in" >"$fifo_dir/out" 2>&1 &
session=$!
exec 3>"$fifo_dir/in"
# say SQL: runs SQL in that session and waits for its marker line.
say() {
    local marker="step_$RANDOM$RANDOM"
    printf '%s\nSELECT %s;\n' "$1" "'$marker'" >&3
    until_true grep -q "^$marker\$" "$fifo_dir/out"
}
say "SELECT 'before ' || count(*) FROM enqueue_batch('citus_a', ARRAY['{}', '{}']::jsonb[]);"
shard=$(shard_of citus_a)
host=$(on 0 "SELECT nodename FROM pg_dist_node WHERE nodeport = ${cq_ports[$a]}")
moved=$(on 0 "SELECT citus_move_shard_placement($shard, '$host', ${cq_ports[$a]}, '$host', ${cq_ports[$b]}, shard_transfer_mode => 'block_writes')" 2>&1)
check "the queue's shard moves to the other worker ($(tr '\n' ' ' <<<"$moved" | cut -c1-80))" test "$(shard_node citus_a)" = "$b"
say "SELECT enqueue('citus_a', '{}') FROM generate_series(1, 1);"
exec 3>&-
wait "$session"
check "the session that remembered the shard now gets QC007 on the old worker (not delegated)" \
    grep -q "ERROR:  QC007: queue \"citus_a\" is not on this node" "$fifo_dir/out"
check "and enqueued before the move (2 jobs)" grep -q "^before 2$" "$fifo_dir/out"
rm -rf "$fifo_dir"
ready=$(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $qa AND state = 'ready'")
got=0
while drained=$(on "$b" "SELECT count(complete(id, attempt)) FROM dequeue('citus_a', 'w1', batch => 1000)") &&
    [ "$drained" -gt 0 ]; do
    got=$((got + drained))
done
check "on the worker it moved to, its $ready ready jobs are claimed and completed ($got)" test "$got" = "$ready"
check "every job of the queue is done, read through the coordinator" \
    test "$(on 0 "SELECT count(*) FILTER (WHERE state <> 'done') || ' ' || count(*) FROM claimqueue.jobs WHERE queue_id = $qa")" = "0 $(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $qa")"

# Background work on every node ---------------------------------------------
# Each node's reaper serves the shards of claimqueue.jobs placed on it, and
# the coordinator's, which holds none, has nothing to do: no pass fails.
on 0 "SELECT create_queue('citus_reaped', lease => '1 second', max_attempts => 3, retention => '1 second')" >/dev/null
r=$(shard_node citus_reaped)
qr=$(on 0 "SELECT queue_id FROM claimqueue.queues WHERE name = 'citus_reaped'")
on "$r" "SELECT count(enqueue('citus_reaped', jsonb_build_object('n', n))) FROM generate_series(1, 10) n" >/dev/null
claimed=$(on "$r" "SELECT count(*) FROM dequeue('citus_reaped', 'gone', batch => 4)")
finished=$(on "$r" "SELECT count(complete(id, attempt)) FROM dequeue('citus_reaped', 'w1', batch => 3)")
check "on the worker holding its shard, 4 jobs are claimed and left, 3 completed ($claimed, $finished)" \
    test "$claimed $finished" = "4 3"
# is N SQL: whether SQL's one value on node N is "t" (for until_true).
is() { test "$(on "$1" "$2")" = t; }
check "that worker's reaper returns the 4 expired leases to ready, with the attempt's error" \
    until_true is 0 "SELECT count(*) = 4 FROM claimqueue.jobs WHERE queue_id = $qr AND state = 'ready' AND last_error = 'lease expired (worker gone, attempt 1)'"
check "and purges the 3 done jobs past the queue's retention" \
    until_true is 0 "SELECT count(*) = 0 FROM claimqueue.jobs WHERE queue_id = $qr AND state = 'done'"
check "the 7 others are all kept" \
    test "$(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE queue_id = $qr")" = 7
check "it counted them in reaper_stats (reaped >= 4, purged >= 3)" \
    test "$(on "$r" "SELECT jobs_reaped >= 4 AND jobs_purged >= 3 FROM reaper_stats")" = t
# A pass that starts after now has ended on every node, without an error.
for node in 0 1 2; do
    passes=$(on "$node" "SELECT passes FROM reaper_stats")
    check "node $node's reaper passes again without an error" \
        until_true is "$node" "SELECT passes > $passes AND last_error IS NULL FROM reaper_stats"
done
by_hand=$(for node in 0 1 2; do on "$node" "SELECT reap() || '/' || purge()" 2>&1; done | tr '\n' ' ')
check "reap() and purge() by hand succeed on every node ($by_hand)" \
    grep -qxE '([0-9]+/[0-9]+ ){3}' <<<"$by_hand"
# Metrics are each worker's own: the worker holding the queue counts its jobs,
# the other none, also after a recount from the table; the coordinator shows
# the holder's count (the cluster's, below).
for node in 0 1 2; do on "$node" "SELECT claimqueue.recount_queue_metrics()" >/dev/null; done
want="7 0 7"
[ "$r" = 2 ] && want="0 7 7"
check "after recount_queue_metrics() on every node, its ready jobs are counted where its shard is (workers and coordinator: $want)" \
    test "$(for node in 1 2 0; do on "$node" "SELECT ready_or_scheduled FROM queue_metrics WHERE queue = 'citus_reaped'"; done | tr '\n' ' ' | sed 's/ $//')" = "$want"
# Recurring jobs: the node holding the queue's shard fires its schedules, so
# each slot's job is enqueued once across the cluster.
on 0 "SELECT schedule('citus_tick', 'every 1 second', 'citus_reaped', '{\"tick\": true}')" >/dev/null
slots() {
    on 0 "SELECT count(*) || ' ' || count(DISTINCT payload->'claimqueue'->>'slot') FROM claimqueue.jobs WHERE queue_id = $qr AND payload->'claimqueue'->>'schedule' = 'citus_tick'"
}
check "a schedule declared on the coordinator fires on the worker holding its queue (3 slots or more)" \
    until_true is 0 "SELECT count(*) >= 3 FROM claimqueue.jobs WHERE queue_id = $qr AND payload->'claimqueue'->>'schedule' = 'citus_tick'"
on 0 "SELECT unschedule('citus_tick')" >/dev/null
read -r fired distinct <<<"$(slots)"
check "each slot once: $fired jobs for $distinct slots" test "$fired" = "$distinct"
check "the jobs carry the schedule's payload, in the queue's shard on that worker" \
    test "$(on "$r" "SELECT count(*) FILTER (WHERE payload->>'tick' = 'true') = count(*) FROM $(on 0 "SELECT shard_name('claimqueue.jobs', get_shard_id_for_distribution_column('claimqueue.jobs', 'citus_reaped'::text))") WHERE payload->'claimqueue'->>'schedule' = 'citus_tick'")" = t
by_hand=$(for node in 0 1 2; do on "$node" "SELECT run_schedules()" 2>&1; done | tr '\n' ' ')
check "run_schedules() by hand succeeds on every node ($by_hand)" grep -qxE '([0-9]+ ){3}' <<<"$by_hand"
# queue_metrics on the coordinator shows the cluster: a queue's totals summed
# over the workers, its gauges from the worker holding its shard.
metric() { on "$1" "SELECT coalesce($2::text, 'null') FROM queue_metrics WHERE queue = 'citus_reaped'"; }
sum_enqueued=$(( $(metric 1 enqueued) + $(metric 2 enqueued) ))
check "on the coordinator, the queue's enqueued total is the workers' sum ($sum_enqueued)" \
    test "$(metric 0 enqueued)" = "$sum_enqueued"
check "and its ready gauge the holding worker's ($(metric "$r" ready_or_scheduled))" \
    test "$(metric 0 ready_or_scheduled)" = "$(metric "$r" ready_or_scheduled)"
check "the coordinator lists every queue the workers count ($(on 0 "SELECT count(*) FROM queue_metrics") queues)" \
    test "$(on 0 "SELECT count(*) FROM queue_metrics")" = "$(on 0 "SELECT count(*) FROM claimqueue.queues")"
# The queue history: the coordinator's reaper samples the cluster's metrics
# (by hand here: the reaper samples once a minute).
on 0 "SELECT claimqueue.sample_queue_history()" >/dev/null
check "a sample taken on the coordinator holds the cluster's totals ($(metric 0 enqueued) enqueued)" \
    test "$(on 0 "SELECT enqueued FROM queue_history WHERE queue = 'citus_reaped' ORDER BY sampled_at DESC LIMIT 1")" = "$(metric 0 enqueued)"

# Through the coordinator: Citus delegates each call that names a queue to the
# worker holding its shard (create_distributed_function by the queue
# argument, colocated with claimqueue.jobs, distributed by the queue's name).
# Two queues, one on each worker.
for i in $(seq 1 40); do
    on 0 "SELECT create_queue('route_$i')" >/dev/null
    node=$(shard_node "route_$i")
    [ "$node" = 1 ] && [ -z "${r1:-}" ] && r1=route_$i
    [ "$node" = 2 ] && [ -z "${r2:-}" ] && r2=route_$i
    [ -n "${r1:-}" ] && [ -n "${r2:-}" ] && break
done
check "two queues, one on each worker (${r1:-none} on 1, ${r2:-none} on 2)" test -n "${r1:-}" -a -n "${r2:-}"
# remote_calls SQL: the statements the coordinator sends to the workers for
# SQL, "port: statement" one a line (Citus's log of its remote commands).
remote_calls() {
    psql -qXAt -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" \
        -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" -c "$1" 2>&1 >/dev/null |
        awk '/^NOTICE:  issuing /{sub(/^NOTICE:  issuing /, ""); cmd=$0} /^DETAIL:  on server/{match($0, /:[0-9]+ /); print substr($0, RSTART + 1, RLENGTH - 2) ": " cmd}'
}
calls=$(remote_calls "SELECT enqueue('$r1', '{\"via\": \"coordinator\"}')")
check "an enqueue on the coordinator is one statement on the queue's worker, delegated ($(grep -c enqueue <<<"$calls") calls)" \
    test "$(grep enqueue <<<"$calls" | sed 's/: .*//')" = "${cq_ports[1]}" -a "$(grep -c 'enqueue(' <<<"$calls")" = 1
for n in 1 2 3; do on 0 "SELECT enqueue('$r2', '{\"n\": $n}')" >/dev/null; done
on 0 "SELECT * FROM enqueue_batch('$r1', ARRAY['{\"b\": 1}', '{\"b\": 2}']::jsonb[])" >/dev/null
# in_shard N QUEUE: the queue's jobs counted in its shard, on worker N directly.
in_shard() { on "$1" "SELECT count(*) FROM claimqueue.jobs_$(shard_of "$2") WHERE queue = '$2'"; }
check "the rows land in each queue's shard on its worker (3 on worker 1, 3 on worker 2)" \
    test "$(in_shard 1 "$r1") $(in_shard 2 "$r2")" = "3 3"
check "with each worker's job ids (group id x 2^48)" \
    test "$(on 0 "SELECT string_agg(DISTINCT (id >> 48)::text, ',' ORDER BY (id >> 48)::text) FROM claimqueue.jobs WHERE queue IN ('$r1', '$r2')")" = "1,2"
drained=0
for q in "$r1" "$r2"; do
    got=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$q', 'w1', batch => 10)")
    while read -r id attempt; do
        [ -n "$id" ] && on 0 "SELECT complete_in('$q', $id, $attempt)" >/dev/null && drained=$((drained + 1))
        last="$q $id $attempt"
    done <<<"$got"
done
check "dequeue then complete_in through the coordinator drain both queues ($drained of 6)" \
    test "$drained $(on 0 "SELECT count(*) FILTER (WHERE state = 'done') FROM claimqueue.jobs WHERE queue IN ('$r1', '$r2')")" = "6 6"
read -r lq lid lattempt <<<"$last"
before=$(everything)
code=$(sqlstate 0 "SELECT complete_in('$lq', $lid, $lattempt)")
check "a stale finish through the coordinator still gets QC003 ($code), and changes nothing" \
    test "$code $(everything)" = "QC003 $before"
# The other calls that finish a job, through the coordinator.
on 0 "SELECT enqueue('$r2', '{}')" >/dev/null
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$r2', 'w1')")
on 0 "SELECT heartbeat_in('$r2', ${held% *}, ${held#* })" >/dev/null
state=$(on 0 "SELECT fail_in('$r2', ${held% *}, ${held#* }, 'boom', retry_in => '0 s')")
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$r2', 'w1')")
on 0 "SELECT snooze_in('$r2', ${held% *}, ${held#* })" >/dev/null
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$r2', 'w1')")
next=$(on 0 "SELECT count(*) FROM complete_and_dequeue(${held% *}, ${held#* }, '$r2', 'w1')")
check "heartbeat_in, fail_in ($state), snooze_in and complete_and_dequeue through the coordinator (attempt ${held#* })" \
    test "$state ${held#* } $next $(on 0 "SELECT state FROM claimqueue.jobs WHERE id = ${held% *}")" = "ready 3 0 done"
on 0 "SELECT enqueue('$r1', '{}')" >/dev/null
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$r1', 'w1')")
on 0 "SELECT complete_batch_in('$r1', ARRAY[${held% *}]::bigint[], ARRAY[${held#* }])" >/dev/null
check "complete_batch_in through the coordinator" \
    test "$(on 0 "SELECT state FROM claimqueue.jobs WHERE id = ${held% *}")" = done
# In a transaction block (force_delegation): enqueues into both workers commit
# together (two-phase commit); a claim and its completion roll back together.
on 0 "BEGIN; SELECT enqueue('$r1', '{\"tx\": 1}'); SELECT enqueue('$r2', '{\"tx\": 2}'); COMMIT;" >/dev/null
check "BEGIN; enqueue on worker 1; enqueue on worker 2; COMMIT: both jobs are there" \
    test "$(on 0 "SELECT count(*) FROM claimqueue.jobs WHERE payload ? 'tx' AND state = 'ready'")" = 2
out=$(on 0 "BEGIN; SELECT id FROM dequeue('$r1', 'w1'); ROLLBACK;")
check "BEGIN; dequeue ... ROLLBACK: the claim is undone on the worker" \
    test -n "$out" -a "$(on 0 "SELECT state FROM claimqueue.jobs WHERE id = $out")" = ready
held=$(on 0 "BEGIN; SELECT id || ' ' || attempt FROM dequeue('$r1', 'w1') ; COMMIT;")
on 0 "BEGIN; SELECT complete_in('$r1', ${held% *}, ${held#* }); COMMIT;" >/dev/null
check "BEGIN; complete_in ...; COMMIT through the coordinator" \
    test "$(on 0 "SELECT state FROM claimqueue.jobs WHERE id = ${held% *}")" = done
# A job named with another queue than its own is refused: the queue's worker
# does not hold it (QC007).
on 0 "SELECT enqueue('$r2', '{}')" >/dev/null
held=$(on 0 "SELECT id || ' ' || attempt FROM dequeue('$r2', 'w1')")
before=$(everything)
code=$(sqlstate 0 "SELECT complete_in('$r1', ${held% *}, ${held#* })")
check "complete_in naming another queue, on the other worker, is refused with QC007 ($code), nothing changed" \
    test "$code $(everything)" = "QC007 $before"
on 0 "SELECT complete_in('$r2', ${held% *}, ${held#* })" >/dev/null
# Bad input gets the SQLSTATE it gets on one server, and changes nothing.
before=$(everything)
code=$(sqlstate 0 "SELECT enqueue('no_such_queue', '{}')")
one=$(cq_on_db=cq_no_citus sqlstate 0 "SELECT enqueue('no_such_queue', '{}')")
check "enqueue into an unknown queue through the coordinator: $code, as on one server ($one)" \
    test "$code" = QC001 -a "$one" = QC001
code=$(sqlstate 0 "SELECT * FROM dequeue('no_such_queue', 'w1')")
one=$(cq_on_db=cq_no_citus sqlstate 0 "SELECT * FROM dequeue('no_such_queue', 'w1')")
check "dequeue from an unknown queue: $code, as on one server ($one)" test "$code" = "$one"
code=$(sqlstate 0 "SELECT complete_in('no_such_queue', 1, 1)")
check "complete_in naming an unknown queue: $code" test "$code" = QC001
# A NULL queue cannot be hashed: refused before Citus sees it (22004, as the
# function itself says on one server), constant or bound parameter, and the
# coordinator is still up.
codes="$(sqlstate 0 "SELECT enqueue(NULL, '{}')") $(sqlstate 0 "SELECT * FROM dequeue(NULL, 'w1')") $(sqlstate 0 "PREPARE p(text) AS SELECT enqueue(\$1, '{}'); EXECUTE p(NULL)") $(sqlstate 0 "CALL dequeue_wait(NULL, 'w1')")"
one=$(cq_on_db=cq_no_citus sqlstate 0 "SELECT enqueue(NULL, '{}')")
check "a NULL queue through the coordinator gets 22004 ($codes), as on one server ($one)" \
    test "$codes" = "22004 22004 22004 22004" -a "$one" = 22004
check "and nothing changed, the coordinator up" test "$(everything)" = "$before"
# The calls that name a job only are not routed: on the coordinator they are
# refused (0A000), and complete_in is the way.
code=$(sqlstate 0 "SELECT complete(${held% *}, ${held#* })")
check "complete(id, attempt) on the coordinator is refused with 0A000 ($code)" test "$code" = 0A000
# dequeue_wait through Citus's CALL delegation: a claim, and an empty queue's
# wait on the worker (its next_due reads the local shard).
on 0 "SELECT enqueue('$r2', '{\"wait\": 1}')" >/dev/null
got=$(on 0 "CALL dequeue_wait('$r2', 'w1', batch => 5, wait => '1 s')")
check "CALL dequeue_wait through the coordinator claims on the worker" \
    grep -q '"wait": 1' <<<"$got"
for j in $(on 0 "SELECT id || ':' || attempt FROM claimqueue.jobs WHERE queue = '$r2' AND state = 'running'"); do
    on 0 "SELECT complete_in('$r2', ${j%:*}, ${j#*:})" >/dev/null
done
got=$(on 0 "CALL dequeue_wait('$r2', 'w1', wait => '200 ms')" 2>&1)
check "an empty queue's dequeue_wait waits on the worker and returns no job ($got)" test "$got" = "[]"
