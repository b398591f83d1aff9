# Sourced by the node-postgres latency benches (wait_latency.sh,
# await_latency.sh): their outer half. run_in_cluster NAME SCRIPT checks the
# tools, installs examples/node-worker's client when missing, and runs
# `SCRIPT --inner OUT` in a throwaway cluster with durable commits (as
# bench/run.sh); OUT is bench/results/<timestamp>-NAME.md, copied to
# bench/results/latest-NAME.md.
run_in_cluster() {
    local name=$1 script=$2 bench stamp out tool
    bench=$(cd "$(dirname "$script")" && pwd)
    for tool in pg_virtualenv psql node npm pg_config; do
        command -v "$tool" >/dev/null || { echo "$name bench: $tool not found in PATH" >&2; exit 2; }
    done
    [ -d "$bench/../examples/node-worker/node_modules/pg" ] ||
        (cd "$bench/../examples/node-worker" && npm install --no-audit --no-fund --silent >/dev/null)
    stamp=$(date -u +%Y%m%dT%H%M%SZ)
    out=$bench/results/$stamp-$name.md
    mkdir -p "$bench/results"
    # pg_virtualenv's default is fsync=off.
    pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=100 -o fsync=on \
        bash "$script" --inner "$out"
    cp "$out" "$bench/results/latest-$name.md"
    echo "$name bench: wrote ${out#"$(dirname "$bench")/"}"
}
