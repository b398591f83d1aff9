#!/usr/bin/env bash
# claimqueue benchmark: commit-rate ceilings, the plain-SQL SKIP LOCKED baseline
# and claimqueue, on one throwaway cluster in one run. See bench/README.md.
#
#   bash bench/run.sh --quick     # about 15 minutes
#   bash bench/run.sh --full      # about 40 minutes
#   bash bench/run.sh --history   # retained history: drain with 0, 1M and 10M finished jobs
#
# Needs claimqueue built and installed (make && make install), pg_virtualenv
# (postgresql-common), pgbench; gnuplot (gnuplot-nox, optional) for the charts.
# Writes bench/results/<timestamp>-<mode>.{md,csv}, <timestamp>-<mode>-held.csv,
# the charts <timestamp>-<mode>-{ceilings,held}.svg (bench/charts.sh), and
# copies them to bench/results/latest-<mode>*; logs go to
# bench/results/tmp/<timestamp>-<mode>/. bench/results/ is not tracked:
# docs/performance.md keeps the figures and charts of the run it names.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=
case ${1:-} in
--quick) mode=quick ;;
--full) mode=full ;;
--history) mode=history ;;
*) echo "usage: bash bench/run.sh --quick|--full|--history" >&2; exit 2 ;;
esac

for tool in pg_virtualenv pgbench psql pg_config; do
    command -v "$tool" >/dev/null || { echo "bench: $tool not found in PATH" >&2; exit 2; }
done
[ -f "$(pg_config --pkglibdir)/claimqueue.so" ] ||
    { echo "bench: claimqueue is not installed (make && make install)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || echo "bench: not root; pg_virtualenv runs in its non-root mode" >&2

stamp=$(date -u +%Y%m%dT%H%M%SZ)
results=$here/results
work=$results/tmp/$stamp-$mode
mkdir -p "$work"
base=$results/$stamp-$mode
start=$(date +%s)

echo "bench: $mode mode, logs in ${work#"$here/../"}"
# pg_virtualenv creates its clusters with fsync=off; -o fsync=on (later, so it
# wins) makes the commits durable. synchronous_commit is on by default.
# inner.sh refuses to run unless SHOW fsync and synchronous_commit say on.
pg_virtualenv -t \
    -o shared_preload_libraries=claimqueue -o max_connections=100 -o fsync=on \
    bash "$here/inner.sh" "$mode" "$work" 2>&1 | tee "$work/run.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "bench: the run failed (exit $rc); logs in $work" >&2; exit "$rc"; }

elapsed=$(( $(date +%s) - start ))
cp "$work/results.csv" "$base.csv"
held=yes
[ "$mode" != history ] || held=  # no held-snapshot probe in that mode
[ -z "$held" ] || cp "$work/windows.csv" "$base-held.csv"

# The charts (bench/charts.sh), for the quick and full runs.
m() { sed -n "s/^$1: //p" "$work/machine.txt"; }
charts=
if [ "$mode" = history ]; then
    :
elif command -v gnuplot >/dev/null; then
    cpu=$(m host | sed -n 's/^nproc \([0-9]*\), memory \([^,]*\), CPU \([^,]*\),.*/\1 cores (\3), \2/p')
    if bash "$here/charts.sh" "$base" "$mode mode, $(m date); $cpu" >"$work/charts.log" 2>&1; then
        charts=yes
    else
        echo "bench: charts.sh failed (see $work/charts.log); no charts" >&2
    fi
else
    echo "bench: gnuplot not found (apt-get install -y gnuplot-nox); no charts" >&2
fi

{
    echo "# claimqueue benchmark: $mode mode, $(m date)"
    echo
    echo "Made by \`bash bench/run.sh --$mode\` in $((elapsed / 60)) min $((elapsed % 60)) s (bench/README.md explains each workload)."
    echo "The figures are information; nothing asserts on them."
    echo
    echo "- **Host:** $(m host)"
    echo "- **Storage:** $(m storage)"
    echo "- **Server:** $(m server)"
    echo "- **claimqueue:** $(m claimqueue); $(m pgbench)"
    echo "- **PGMQ:** $(m pgmq) (its rows are there only when the server has the pgmq extension)"
    echo "- **Settings:** shared_buffers $(m shared_buffers), synchronous_commit $(m synchronous_commit), fsync $(m fsync), wal_sync_method $(m wal_sync_method), full_page_writes $(m full_page_writes), wal_level $(m wal_level), max_wal_size $(m max_wal_size), checkpoint_timeout $(m checkpoint_timeout), autovacuum $(m autovacuum), max_connections $(m max_connections), shared_preload_libraries $(m shared_preload_libraries)"
    echo "- **pgbench:** \`-n -M prepared -T <s> -c <clients> -j min(clients, 2)\`; every workload starts from truncated, vacuumed, analyzed tables after a CHECKPOINT."
    echo
    echo "sync: the measured sessions' synchronous_commit (off: the CPU cost; on: durable commits). Steady and held run durable."
    echo "Ratio to ceiling: the workload's pgbench loops/s ÷ the loops/s of the ceiling loop with as many"
    echo "commits per loop, at the same client count and sync (commit2 for drain and batch, commit1 for one commit per job)."
    echo "Ratio to plain: claimqueue jobs/s ÷ plain-SQL jobs/s, same workload, clients and sync."
    echo "\"backlog left\" = ready jobs after the run (0 would mean the queue ran dry and the rate is understated)."
    echo
    echo "## Results"
    echo
    cat "$work/table.md"
    echo
    for chart in ceilings held; do
        [ -n "$charts" ] && [ -f "$base-$chart.svg" ] || continue
        echo "![$chart]($(basename "$base-$chart.svg"))"
        echo
    done
    if [ -n "$held" ]; then
        echo "Data: [$(basename "$base.csv")]($(basename "$base.csv")) (every row, with ratios),"
        echo "[$(basename "$base-held.csv")]($(basename "$base-held.csv")) (held-snapshot windows)."
    else
        echo "Data: [$(basename "$base.csv")]($(basename "$base.csv")) (every row, with ratios)."
    fi
} >"$base.md"

for ext in md csv; do cp "$base.$ext" "$results/latest-$mode.$ext"; done
[ -z "$held" ] || cp "$base-held.csv" "$results/latest-$mode-held.csv"
if [ -n "$charts" ]; then
    for chart in ceilings held; do
        [ ! -f "$base-$chart.svg" ] || cp "$base-$chart.svg" "$results/latest-$mode-$chart.svg"
    done
fi
echo "bench: wrote ${base#"$here/"}.md (and .csv), copied to results/latest-$mode.md; took $((elapsed / 60)) min $((elapsed % 60)) s"
