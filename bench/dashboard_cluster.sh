# Sourced by bench/dashboard.sh and bench/done_page.sh: the throwaway cluster
# they run in (pg_virtualenv, claimqueue preloaded, the installed build; the
# script runs itself again inside it), the dashboard built and started against
# it, the history of finished jobs, and a page's median and 95th percentile.
bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$bench/.." && pwd)

if [ -z "${CLAIMQUEUE_BENCH_IN_CLUSTER:-}" ]; then
    major=$("${PG_CONFIG:-pg_config}" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
    (cd "$root/clients/dashboard" && npm run -s build)
    CLAIMQUEUE_BENCH_IN_CLUSTER=1 exec pg_virtualenv -v "$major" -t \
        -o shared_preload_libraries=claimqueue -o shared_buffers=512MB -o max_wal_size=8GB \
        -o max_connections=50 bash "$0"
fi

work=$(mktemp -d)
dash_pid=""
background=()
cleanup() {
    local p
    for p in "${background[@]}" $dash_pid; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }

# load_history N: the queue bench and N finished jobs in it, one in 100 failed
# (the dead letters' index), loaded by one INSERT ... SELECT; sets load_s.
load_history() {
    local t0=$SECONDS
    q "CREATE EXTENSION claimqueue" 2>/dev/null
    q "SELECT create_queue('bench', lease => '1 hour', max_attempts => 1)" >/dev/null
    q "INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                                    started_at, finished_at, worker, payload, last_error)
       SELECT q.queue_id, CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'done' END, 1, 1,
              now() - interval '1 day', now() - interval '1 day', now() - interval '1 day',
              now() - interval '1 day' + g * interval '1 ms', 'history', jsonb_build_object('n', g),
              CASE WHEN g % 100 = 0 THEN 'boom' END
       FROM claimqueue.queues q, generate_series(1, $1) g WHERE q.name = 'bench'"
    load_s=$((SECONDS - t0))
}

# refill N: N more ready jobs in bench.
refill() {
    q "SELECT count(*) FROM enqueue_batch('bench', array_fill('{}'::jsonb, ARRAY[$1]))" >/dev/null
}

# start_dashboard [URL]: the dashboard on a free loopback port (dash_pid, base).
start_dashboard() {
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    node "$root/clients/dashboard/dist/cli.js" dashboard --port "$port" ${1:+--url "$1"} >"$work/dashboard.log" 2>&1 &
    dash_pid=$!
    base="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do curl -fsS "$base/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
    echo "the dashboard did not start:" >&2; cat "$work/dashboard.log" >&2; exit 1
}

# page PATH LABEL: a table row, the median and 95th percentile of $fetches
# fetches of the page, timed by the client over the whole response.
page() {
    for _ in $(seq 1 "$fetches"); do curl -fsS -o /dev/null -w '%{time_total}\n' "$base$1"; done | sort -n |
        awk -v label="$2" '{ t[NR] = $1 * 1000 } END { printf "| %s | %.1f | %.1f |\n", label, t[int((NR + 1) / 2)], t[int(NR * 0.95 + 0.5)] }'
}
