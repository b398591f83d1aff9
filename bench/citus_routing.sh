#!/usr/bin/env bash
# What Citus's function delegation costs and allows, measured on the test
# cluster of test/citus (a coordinator and two workers on loopback) before
# claimqueue's distributed mode exists, so that its design rests on figures:
#
#   1. per-call latency of one single-row function (one UPDATE by key)
#      through the coordinator (delegated), on the worker holding the key
#      (direct), and on one server (a local table on the coordinator);
#   2. the same call inside BEGIN ... COMMIT, without and with
#      force_delegation;
#   3. whether a function taking the queue's name (text) can be delegated
#      by a table distributed by queue_id (integer);
#   4. what finding a job's queue from its id alone costs: a query across
#      every shard, against one that names the queue;
#   5. what create_reference_table says of a table with claimqueue's
#      triggers, with and without citus.enable_unsafe_triggers.
#
# Nothing asserts on the figures. Needs Citus installed for this major
# (test/citus/build.sh) and claimqueue installed; run as root in a root of
# scripts/chroot.sh (the servers run as postgres):
#
#   SECONDS_PER_RUN=10 bash bench/citus_routing.sh     (seconds per pgbench run)
set -uo pipefail
cd "$(dirname "$0")/.."
. test/citus/cluster.sh
secs=${SECONDS_PER_RUN:-10}
trap cluster_stop EXIT
cluster_start || { echo "the cluster did not start"; exit 1; }
on 0 "CREATE EXTENSION claimqueue" >/dev/null

on 0 "CREATE TABLE kv (k text PRIMARY KEY, v bigint NOT NULL)" >/dev/null
on 0 "SELECT create_distributed_table('kv', 'k')" >/dev/null
on 0 "INSERT INTO kv SELECT 'q' || n, 0 FROM generate_series(1, 100) n" >/dev/null
on 0 "CREATE FUNCTION bump(k text) RETURNS bigint LANGUAGE sql AS \$\$ UPDATE kv SET v = v + 1 WHERE kv.k = bump.k RETURNING v \$\$" >/dev/null
on 0 "CREATE FUNCTION bump_forced(k text) RETURNS bigint LANGUAGE sql AS \$\$ UPDATE kv SET v = v + 1 WHERE kv.k = bump_forced.k RETURNING v \$\$" >/dev/null
on 0 "SELECT create_distributed_function('bump(text)', 'k', colocate_with := 'kv')" >/dev/null
on 0 "SELECT create_distributed_function('bump_forced(text)', 'k', colocate_with := 'kv', force_delegation := true)" >/dev/null
# One server: the same table and function, local to the coordinator.
on 0 "CREATE TABLE kv_local (k text PRIMARY KEY, v bigint NOT NULL)" >/dev/null
on 0 "INSERT INTO kv_local SELECT 'q' || n, 0 FROM generate_series(1, 100) n" >/dev/null
on 0 "CREATE FUNCTION bump_local(k text) RETURNS bigint LANGUAGE sql AS \$\$ UPDATE kv_local SET v = v + 1 WHERE kv_local.k = bump_local.k RETURNING v \$\$" >/dev/null

# The worker that holds 'q1': its port.
holder=$(on 0 "SELECT nodeport FROM citus_shards WHERE table_name = 'kv'::regclass AND shardid = get_shard_id_for_distribution_column('kv', 'q1')")
n_holder=1
[ "$holder" = "${cq_ports[2]}" ] && n_holder=2
shard=$(on 0 "SELECT shard_name('kv', get_shard_id_for_distribution_column('kv', 'q1'))")
on "$n_holder" "SET citus.enable_ddl_propagation = off; CREATE FUNCTION bump_direct(k text) RETURNS bigint LANGUAGE sql AS \$\$ UPDATE $shard SET v = v + 1 WHERE k = bump_direct.k RETURNING v \$\$" >/dev/null

# bench NODE NAME SQL: one client, prepared statements, $secs seconds.
bench() {
    local n=$1 name=$2 sql=$3 f
    f=$(mktemp)
    printf '%s\n' "$sql" >"$f"
    chmod 644 "$f"
    local out
    out=$(pgbench -n -M prepared -c 1 -T "$secs" -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -f "$f" "$cq_db" 2>&1)
    printf '%-58s %8s ms   %8s calls/s\n' "$name" \
        "$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' <<<"$out")" \
        "$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")"
    rm -f "$f"
}

echo "== per-call latency, one client, $secs s each ($(date -u +%Y-%m-%d), PostgreSQL $(pg_config --version | awk '{print $2}'), Citus $(on 0 "SELECT extversion FROM pg_extension WHERE extname = 'citus'"))"
bench 0 "one server: SELECT bump_local('q1')" "SELECT bump_local('q1');"
bench "$n_holder" "worker, direct on the shard: SELECT bump_direct('q1')" "SELECT bump_direct('q1');"
bench 0 "coordinator, delegated: SELECT bump('q1')" "SELECT bump('q1');"
bench 0 "coordinator, in BEGIN..COMMIT, not forced" "BEGIN;
SELECT bump('q1');
COMMIT;"
bench 0 "coordinator, in BEGIN..COMMIT, force_delegation" "BEGIN;
SELECT bump_forced('q1');
COMMIT;"
bench 0 "coordinator, two keys on two nodes in one transaction" "BEGIN;
SELECT bump_forced('q1');
SELECT bump_forced('q2');
COMMIT;"

echo "== a job's queue from its id alone: a query across every shard, or the queue named"
on 0 "CREATE TABLE jobs_t (queue text, id bigint, state text, PRIMARY KEY (queue, id))" >/dev/null
on 0 "CREATE INDEX ON jobs_t (id)" >/dev/null
on 0 "SELECT create_distributed_table('jobs_t', 'queue')" >/dev/null
on 0 "INSERT INTO jobs_t SELECT 'q' || (n % 100), n, 'running' FROM generate_series(1, 100000) n" >/dev/null
on 0 "CREATE TABLE jobs_t4 (LIKE jobs_t INCLUDING ALL)" >/dev/null
on 0 "SELECT create_distributed_table('jobs_t4', 'queue', shard_count := 4)" >/dev/null
on 0 "INSERT INTO jobs_t4 SELECT * FROM jobs_t" >/dev/null
bench 0 "by id alone, 32 shards (every shard asked)" "SELECT queue FROM jobs_t WHERE id = 4242;"
bench 0 "by id alone, 4 shards (every shard asked)" "SELECT queue FROM jobs_t4 WHERE id = 4242;"
bench 0 "queue named: WHERE queue = 'q42' AND id = 4242" "SELECT state FROM jobs_t WHERE queue = 'q42' AND id = 4242;"

echo "== a function taking the queue's name, co-located with a table distributed by an integer"
on 0 "CREATE TABLE by_id (queue_id integer, id bigint, PRIMARY KEY (queue_id, id))" >/dev/null
on 0 "SELECT create_distributed_table('by_id', 'queue_id')" >/dev/null
# PL/pgSQL, so that the planner cannot inline it; it says where it ran.
on 0 "CREATE FUNCTION by_name(queue text) RETURNS text LANGUAGE plpgsql AS \$\$ BEGIN RETURN current_setting('port'); END \$\$" >/dev/null
echo "create_distributed_function: $(on 0 "SELECT create_distributed_function('by_name(text)', 'queue', colocate_with := 'by_id')" 2>&1 | tail -1)"
echo "SELECT by_name('emails') (ran on port): $(on 0 "SELECT by_name('emails')" 2>&1 | tr '\n' ' ')"
echo "SELECT by_name('7') (ran on port): $(on 0 "SELECT by_name('7')" 2>&1 | tr '\n' ' ')"
echo "(ports: coordinator ${cq_ports[0]}, workers ${cq_ports[1]} ${cq_ports[2]})"

echo "== create_reference_table of a table with claimqueue's triggers"
on 0 "CREATE TABLE trig (id int PRIMARY KEY)" >/dev/null
on 0 "CREATE TRIGGER trig_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON trig FOR EACH STATEMENT EXECUTE FUNCTION claimqueue.queues_changed()" >/dev/null
echo "default: $(on 0 "SELECT create_reference_table('trig')" 2>&1 | tail -1)"
echo "citus.enable_unsafe_triggers: $(on 0 "SET citus.enable_unsafe_triggers = on; SELECT create_reference_table('trig')" 2>&1 | tail -1)"
echo "claimqueue.queues itself: $(on 0 "SET citus.enable_unsafe_triggers = on; SELECT create_reference_table('claimqueue.queues')" 2>&1 | tr '\n' ' ')"
echo "== ids of a bigserial in a distributed table, inserted through the coordinator"
on 0 "CREATE TABLE seqt (k text, id bigserial, PRIMARY KEY (k, id))" >/dev/null
on 0 "SELECT create_distributed_table('seqt', 'k')" >/dev/null
on 0 "INSERT INTO seqt (k) SELECT 'q' || n FROM generate_series(1, 4) n" >/dev/null
echo "through the coordinator: $(on 0 "SELECT string_agg(id::text, ' ' ORDER BY id) FROM seqt")"
echo "on worker 1: $(on 1 "INSERT INTO seqt (k) VALUES ('q1') RETURNING id" 2>&1 | tail -1)"
echo "on worker 2: $(on 2 "INSERT INTO seqt (k) VALUES ('q1') RETURNING id" 2>&1 | tail -1)"
