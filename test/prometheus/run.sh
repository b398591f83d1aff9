#!/usr/bin/env bash
# contrib/prometheus/queries.yaml with the real exporter: a throwaway cluster
# (pg_virtualenv, claimqueue preloaded) runs a known workload, Debian's
# prometheus-postgres-exporter serves it on a loopback port with the query
# file, and each claimqueue series scraped from /metrics must carry the
# workload's values. Prints TAP-style "ok"/"not ok" lines and
# "tests: N passed, M failed".
#
#   bash test/prometheus/run.sh        (as root, the exporter runs as nobody)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

# Outside a cluster: start one and run again inside it.
if [ -z "${CLAIMQUEUE_PROM_IN_CLUSTER:-}" ]; then
    major=$("${PG_CONFIG:-pg_config}" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
    CLAIMQUEUE_PROM_IN_CLUSTER=1 exec pg_virtualenv -v "$major" -t \
        -o shared_preload_libraries=claimqueue bash "$0"
fi

. test/lib/tap.sh
deadline=60
exporter=/usr/bin/prometheus-postgres-exporter
[ -x "$exporter" ] || { echo "not ok 1 - $exporter is missing (scripts/deps.sh installs it)"; echo "tests: 0 passed, 1 failed"; exit 1; }

work=$(mktemp -d)
exporter_pid=""
cleanup() {
    [ -n "$exporter_pid" ] && kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

db=claimqueue_prom
psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
q() { psql -qXAt -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

# The workload: 10 jobs enqueued, 4 claimed, 2 completed, 1 failed for good
# (max_attempts 1), 1 left running, 6 ready (one of them scheduled).
q "CREATE EXTENSION claimqueue" >/dev/null 2>&1
q "SELECT create_queue('prom', lease => '1 hour', max_attempts => 1)" >/dev/null
# Gauges are exact once counted (the reaper counts a new queue at its next
# pass; recount_queue_metrics() counts now).
counted() {
    q "SELECT claimqueue.recount_queue_metrics()" >/dev/null
    [ "$(q "SELECT gauges_since IS NOT NULL FROM queue_metrics WHERE queue = 'prom'")" = t ]
}
check "queue_metrics has counted the new queue's gauges" until_true counted
q "SELECT count(*) FROM enqueue_batch('prom', array_fill('{}'::jsonb, ARRAY[9]))" >/dev/null
q "SELECT enqueue('prom', run_at => now() + interval '1 day')" >/dev/null
q "SELECT count(*) FROM dequeue('prom', 'w1', batch => 4)" >/dev/null
q "SELECT complete(id, attempt) FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 2" >/dev/null
q "SELECT fail(id, attempt, 'broken') FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1" >/dev/null
reaper_running() { [ "$(q "SELECT state FROM reaper_stats")" = running ]; }
check "the reaper of the test database is running" until_true reaper_running

# A free loopback port for the exporter.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cp contrib/prometheus/queries.yaml "$work/queries.yaml"
chmod 755 "$work" && chmod 644 "$work/queries.yaml"
as_user=()
# setpriv execs the exporter itself (no process in between), so its pid is $!.
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
dsn="host=${PGHOST:-localhost} port=${PGPORT:-5432} user=${PGUSER:-postgres} dbname=$db sslmode=disable"
[ -n "${PGPASSWORD:-}" ] && dsn="$dsn password=$PGPASSWORD"
# Only the DSN: the exporter's driver (lib/pq) refuses some PG* variables
# that pg_virtualenv sets (PGSYSCONFDIR).
env -i PATH=/usr/bin:/bin DATA_SOURCE_NAME="$dsn" "${as_user[@]}" "$exporter" \
    --web.listen-address="127.0.0.1:$port" --extend.query-path="$work/queries.yaml" \
    --disable-default-metrics --disable-settings-metrics --log.level=warn >"$work/exporter.log" 2>&1 &
exporter_pid=$!
echo "# exporter pid $exporter_pid on 127.0.0.1:$port"

scrape() { curl -sf --max-time 10 "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"; }
# value NAME: the sample of series NAME for queue prom (or the reaper's).
value() {
    awk -v name="$1" '$1 ~ "^"name"[{]" && ($1 ~ /queue="prom"/ || name ~ /_reaper_/) {print $2; exit}' "$work/metrics.txt"
}
# is NAME EXPECTED: the sample equals EXPECTED (compared as numbers).
is() {
    local got
    got=$(value "$1")
    if [ -n "$got" ] && awk -v a="$got" -v b="$2" 'BEGIN {exit !(a + 0 == b + 0)}'; then
        ok "$1 = $2"
    else
        fail "$1 = $2 (scraped: ${got:-none})"
    fi
}

serves() { scrape && grep -q '^claimqueue_enqueued_total{' "$work/metrics.txt"; }
check "the exporter serves claimqueue's series" until_true serves
scrape || fail "scrape /metrics"
grep '^claimqueue' "$work/metrics.txt" | sed 's/^/# /'
check "claimqueue_enqueued_total is a counter" grep -q '^# TYPE claimqueue_enqueued_total counter' "$work/metrics.txt"
check "claimqueue_ready_jobs is a gauge" grep -q '^# TYPE claimqueue_ready_jobs gauge' "$work/metrics.txt"
check "series carry the database and the queue as labels" \
    grep -q "^claimqueue_claimed_total{.*datname=\"$db\".*queue=\"prom\"" "$work/metrics.txt"
is claimqueue_enqueued_total 10
is claimqueue_claimed_total 4
is claimqueue_completed_total 2
is claimqueue_failed_total 1
is claimqueue_reaped_total 0
is claimqueue_retried_total 0
is claimqueue_cancelled_total 0
is claimqueue_ready_jobs 6
is claimqueue_running_jobs 1
age=$(value claimqueue_oldest_ready_age_seconds)
check "claimqueue_oldest_ready_age_seconds is a number >= 0 (${age:-none})" \
    awk -v a="${age:-x}" 'BEGIN {exit !(a ~ /^[0-9.e+-]+$/ && a + 0 >= 0)}'
is claimqueue_reaper_up 1
is claimqueue_reaper_failing 0
passes=$(value claimqueue_reaper_passes_total)
check "claimqueue_reaper_passes_total counts passes (${passes:-none})" \
    awk -v a="${passes:-0}" 'BEGIN {exit !(a + 0 >= 1)}'

# The next scrape follows the queue: the running job completes, one is cancelled.
q "SELECT complete(id, attempt) FROM claimqueue.jobs WHERE state = 'running'" >/dev/null
q "SELECT cancel(id) FROM claimqueue.jobs WHERE state = 'ready' ORDER BY id LIMIT 1" >/dev/null
scrape || fail "scrape /metrics again"
is claimqueue_completed_total 3
is claimqueue_cancelled_total 1
is claimqueue_running_jobs 0
is claimqueue_ready_jobs 5

if [ "$failed" -gt 0 ]; then
    echo "# exporter log:"; sed 's/^/# /' "$work/exporter.log"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
