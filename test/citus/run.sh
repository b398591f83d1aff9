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
everything() {
    on 0 "SELECT count(*) || ' ' || md5(string_agg(j::text, '|' ORDER BY j.id)) FROM claimqueue.jobs j"
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

# Two queues and their jobs, one of them running: refused (55006), nothing changed.
on 0 "SELECT create_queue('mail'), create_queue('sms')" >/dev/null
on 0 "SELECT grant_queue('mail', 'consume', 'claimqueue_consumer')" >/dev/null
on 0 "CREATE ROLE cq_citus_producer IN ROLE claimqueue_producer" >/dev/null
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
check "jobs is distributed by queue_id, the queue definitions are reference tables" \
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
# Until calls are routed to the workers, the hot path refuses to write the
# coordinator's empty table underneath (0A000), and writes nothing.
code=$(sqlstate 0 "SELECT enqueue('mail', '{}')")
check "enqueue through the coordinator's own table is refused with 0A000 ($code)" test "$code" = 0A000
code=$(sqlstate 1 "SELECT dequeue('mail', 'w1')")
check "so is a claim on a worker's table underneath ($code)" test "$code" = 0A000
check "and nothing was written" test "$(everything)" = "$before"
# A grant revoked through the coordinator changes the shards of the
# reference table, whose trigger invalidates the table itself: a session that
# remembered the grant forgets it at once (42501 where the grant let the call
# reach the hot path's 0A000).
codes=$(psql -qXAt -v VERBOSITY=verbose -h 127.0.0.1 -p "${cq_ports[0]}" -U postgres -d "$cq_db" \
    -c "SET ROLE cq_citus_producer" -c "SELECT enqueue('mail', '{}')" -c "RESET ROLE" \
    -c "SELECT revoke_queue('mail', 'produce', 'cq_citus_producer')" \
    -c "SET ROLE cq_citus_producer" -c "SELECT enqueue('mail', '{}')" 2>&1 >/dev/null |
    sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p' | tr '\n' ' ')
check "a session forgets a grant revoked on the reference table's shards ($codes)" test "$codes" = "0A000 42501 "
