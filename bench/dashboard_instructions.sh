#!/usr/bin/env bash
# What watching the dashboard costs a drain's own work, without the machine's
# noise: the instructions per drained job of the drain's backend (callgrind,
# bench/instructions.sh's cq_drain) without and with the dashboard being
# watched the whole time, every page fetched again as soon as the last one
# returned (BENCH_PAUSE=0 seconds between rounds). Whatever the dashboard's
# statements do to the drain — locks they take or wait for, snapshots that
# keep the drain's claims from pruning, buffers and index pages they touch —
# shows in the drain backend's count; the dashboard's own backends run under
# callgrind too, about as slowed as the drain, so the pages a drained job
# sees go up with how often they are fetched per job, not per second: the
# figure printed beside the ratio, against what one browser's live updates
# of every page (each every 5 s) ask per job at a drain of 10,000 jobs/s.
# Figures only, nothing asserted.
#
#   bash bench/dashboard_instructions.sh    (BENCH_HISTORY=50000 finished jobs beside the drain's
#                                            ready ones, BENCH_PAUSE=0; LOOPS_SHORT, LOOPS_LONG
#                                            as bench/instructions.sh)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
history=${BENCH_HISTORY:-50000}
pause=${BENCH_PAUSE:-0}
export LOOPS_SHORT=${LOOPS_SHORT:-500} LOOPS_LONG=${LOOPS_LONG:-2500}
(cd "$root/clients/dashboard" && npm run -s build)
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# The history (one in 100 failed), counted for queue_metrics and sampled for the chart.
export FILL_SQL="INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at,
                                   started_at, finished_at, worker, payload, last_error)
  SELECT q.queue_id, CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'done' END, 1, 1,
         now() - interval '1 day', now() - interval '1 day', now() - interval '1 day',
         now() - interval '1 day' + g * interval '1 ms', 'history', jsonb_build_object('n', g),
         CASE WHEN g % 100 = 0 THEN 'boom' END
  FROM claimqueue.queues q, generate_series(1, $history) g WHERE q.name = 'bench';
  SELECT claimqueue.recount_queue_metrics(); SELECT claimqueue.sample_queue_history();"

# The watcher (run by bench/instructions.sh inside its cluster): the dashboard,
# and every page fetched in turn, each round's fetches counted in $work/fetches.
cat >"$work/watch.sh" <<WATCH
set -u
port=\$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node "$root/clients/dashboard/dist/cli.js" dashboard --port "\$port" &
base="http://127.0.0.1:\$port"
for _ in \$(seq 1 300); do curl -fsS "\$base/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
failed=\$(psql -XAtc "SELECT id FROM claimqueue.jobs WHERE state = 'failed' LIMIT 1")
pages=("/" "/queues/bench" "/queues/bench?state=ready" "/queues/bench?state=scheduled"
       "/queues/bench?state=running" "/queues/bench?state=done" "/queues/bench?state=failed"
       "/queues/bench?key=needle" "/jobs/\$failed" "/dead-letters" "/dead-letters?queue=bench&error=boom"
       "/schedules" "/claims" "/reapers" "/locks" "/api/history.json")
echo "\$(date +%s.%N) start \${#pages[@]}" >>"$work/fetches"
while :; do
    for p in "\${pages[@]}"; do curl -fsS -o /dev/null "\$base\$p" && echo "\$(date +%s.%N) \$p" >>"$work/fetches"; done
    sleep $pause
done
WATCH

count() { sed -n 's/^cq_drain *\([0-9]*\)$/\1/p'; }
echo "claimqueue dashboard instructions bench, $(date -u +%Y-%m-%dT%H:%MZ), PostgreSQL $(pg_config --version | cut -d' ' -f2)"
without=$(bash "$here/instructions.sh" cq_drain | count)
with=$(DURING="bash $work/watch.sh" bash "$here/instructions.sh" cq_drain | count)
fetched=$(grep -vc ' start ' "$work/fetches" || true)
npages=$(sed -n 's/.* start \([0-9]*\)$/\1/p' "$work/fetches" | head -1)
awk -v w="$without" -v d="$with" -v n="$fetched" -v np="$npages" -v loops=$((LOOPS_SHORT + LOOPS_LONG)) -v h="$history" 'BEGIN {
    printf "instructions per drained job (cq_drain, %d finished jobs kept): %d without the dashboard, %d watched\n", h, w, d
    printf "the dashboard watched costs the drain %+.2f %% instructions per job\n", (d - w) / w * 100
    printf "pages fetched while the drain ran: %d for %d jobs, %.4f a job (live updates of every page, %d pages every 5 s, at 10,000 jobs/s: %.5f a job, %.0f times fewer)\n", n, loops, n / loops, np, np / 5 / 10000, (n / loops) / (np / 5 / 10000)
}'
