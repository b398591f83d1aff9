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
err=$(on 0 "SET citus.enable_unsafe_triggers = on; SELECT create_reference_table('claimqueue.queues')" 2>&1)
check "with citus.enable_unsafe_triggers it fails too (the restore-merge trigger fires on the shard)" \
    grep -q "^ERROR:" <<<"$err"
err=$(on 0 "SELECT create_distributed_table('claimqueue.jobs', 'queue_id')" 2>&1)
check "create_distributed_table('claimqueue.jobs', 'queue_id') is refused: its primary key lacks queue_id" \
    grep -q 'cannot create constraint on "jobs"' <<<"$err"
check "none of claimqueue's tables became a Citus table" \
    test "$(on 0 "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'claimqueue.%'")" = 0
check "the jobs are as they were" test "$(digest)" = "$before"
claimed=$(on 0 "SELECT count(complete(id, attempt)) FROM dequeue('local_q', 'w1')")
check "the queue still claims and completes on the coordinator" test "$claimed" = 1
