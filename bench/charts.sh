#!/usr/bin/env bash
# Draws a benchmark run's charts as SVG with gnuplot (Debian's gnuplot-nox):
#   BASE-held.svg       jobs/s per 10-s window of each system under a held snapshot
#   BASE-ceilings.svg   each workload's jobs/s beside its commit-rate ceiling
# from BASE.csv and BASE-held.csv, which bench/run.sh writes. run.sh calls it;
# run it by hand to draw a kept run again (docs/performance.md shows the
# charts of the run it names):
#
#   bash bench/charts.sh bench/results/20261207T043001Z-quick ["subtitle"]
#
# The subtitle defaults to the run's date, mode and machine, read from BASE.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
base=${1:?usage: bash bench/charts.sh BASE [SUBTITLE]}
base=${base%.csv}
command -v gnuplot >/dev/null || { echo "charts: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 2; }
[ -f "$base.csv" ] || { echo "charts: no $base.csv" >&2; exit 2; }

subtitle=${2:-}
if [ -z "$subtitle" ] && [ -f "$base.md" ]; then
    # "# claimqueue benchmark: quick mode, 2026-12-07 04:30:01 UTC" and
    # "- **Host:** nproc 2, memory 23.5 GiB, CPU AMD EPYC ..., kernel ..."
    run=$(sed -n 's/^# claimqueue benchmark: //p' "$base.md" | head -1)
    host=$(sed -n 's/^- \*\*Host:\*\* nproc \([0-9]*\), memory \([^,]*\), CPU \([^,]*\),.*/\1 cores (\3), \2/p' "$base.md" | head -1)
    subtitle="$run; $host"
fi
# gnuplot strings are in single quotes: keep the subtitle free of them.
subtitle=${subtitle//\'/}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# results.csv (bench/report.sql): ord,section,sync,workload,impl,clients,
# duration_s,loops,loops_per_s,jobs,jobs_per_s,commits_per_s,ceiling_ref,
# ceiling_loops_per_s,ratio_to_ceiling,... (the note, last, may hold commas).
# One row per workload and commit mode: the ceiling's jobs/s (its loops/s: one
# job per loop), then each system's jobs/s.
impls=$(awk -F, '
    NR > 1 && $2 != "ceiling" && $2 != "steady" && $2 != "held" && $2 != "history" && !($5 in s) { s[$5]; seen[++n] = $5 }
    END {
        k = split("plain claimqueue floor pgmq", order, " ")
        for (i = 1; i <= k; i++) if (order[i] in s) { printf "%s ", order[i]; delete s[order[i]] }
        for (i = 1; i <= n; i++) if (seen[i] in s) printf "%s ", seen[i]
    }' "$base.csv")
impls=${impls% }
for sync in off on; do
    awk -F, -v sync="$sync" -v impls="$impls" -v out_single="$work/single-$sync.dat" -v out_batch="$work/batch-$sync.dat" '
        BEGIN {
            n = split(impls, im, " ")
            label["drain"] = "drain"; label["one_commit_per_job"] = "one commit a job"
            label["one_call_per_job"] = "one call a job"; label["batch100"] = "batch of 100"
        }
        NR > 1 && $3 == sync {
            if ($2 == "ceiling") { ceil[$4] = $9; next }
            if ($4 in label) { v[$4, $5] = $11; ref[$4] = $13; seen[$4] = 1 }
        }
        function row(w, with_ceiling, out,   line, i) {
            line = "\"" label[w] "\""
            if (with_ceiling) line = line " " ((ref[w] in ceil) ? ceil[ref[w]] : "?")
            for (i = 1; i <= n; i++) line = line " " (((w, im[i]) in v) && v[w, im[i]] != "" ? v[w, im[i]] : "?")
            print line > out
        }
        END {
            # complete_and_dequeue() has no plain twin: its group shows claimqueue alone.
            split("drain one_commit_per_job one_call_per_job", single, " ")
            for (k = 1; k <= 3; k++) if (single[k] in seen) row(single[k], 1, out_single)
            if ("batch100" in seen) row("batch100", 0, out_batch)
        }' "$base.csv"
done

drawn=()
if [ -n "$impls" ] && [ -s "$work/single-off.dat" ] && [ -s "$work/single-on.dat" ] && [ -s "$work/batch-off.dat" ] && [ -s "$work/batch-on.dat" ]; then
    gnuplot -e "dir='$work'; cols='ceiling $impls'; bcols='$impls'; outfile='$base-ceilings.svg'; subtitle='$subtitle'" \
        "$here/charts/ceilings.gp"
    drawn+=("$base-ceilings.svg")
fi
if [ -f "$base-held.csv" ] && [ "$(wc -l <"$base-held.csv")" -gt 1 ]; then
    held_impls=$(awk -F, 'NR > 1 && !($1 in s) { s[$1]; printf "%s ", $1 }' "$base-held.csv")
    gnuplot -e "infile='$base-held.csv'; outfile='$base-held.svg'; impls='${held_impls% }'; subtitle='$subtitle'" \
        "$here/charts/held.gp"
    drawn+=("$base-held.svg")
fi
[ ${#drawn[@]} -gt 0 ] || { echo "charts: nothing to draw from $base.csv" >&2; exit 2; }
printf 'charts: %s\n' "${drawn[@]}"
