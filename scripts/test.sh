#!/usr/bin/env bash
# Runs every claimqueue test on this machine: installs what is missing, builds,
# installs, then runs the C++ unit tests (ctest), and in throwaway clusters
# (pg_virtualenv) the pg_regress files, the isolation specs, the pgTAP contract,
# the stress test, the node-postgres worker, the upgrade test, the pg_dump
# test, the no-preload check, the fault-injection soak, the reaper's lifecycle,
# the waiting dequeue, and the client libraries (clients/node, clients/python:
# their own tests and the same fault test in each language). Ends with
# "tests: N passed, M failed".
#   STRESS_JOBS=50000   jobs drained by the stress test
#   SOAK_JOBS=10000     jobs drained by the fault-injection soak (test/soak/run.sh alone: 100000)
#   FAULT_JOBS=5000     jobs drained by each client fault test (test/clients/run.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
logs="$root/build/test-logs"
mkdir -p "$logs"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

bash scripts/deps.sh || exit 1
make -s -j2 || exit 1
$SUDO make -s install || exit 1

passed=0
failed=0
summary=()

# record SUITE PASSED FAILED
record() {
    passed=$((passed + $2))
    failed=$((failed + $3))
    summary+=("$(printf '%-12s %5d passed, %d failed' "$1" "$2" "$3")")
}

# record_tap SUITE LOG: counts a shell suite's "ok" / "not ok" lines; a suite
# that exited non-zero without a "not ok" line counts as one failure.
record_tap() {
    local suite=$1 log=$2 p f
    p=$(grep -c "^ok " "$log")
    f=$(grep -c "^not ok " "$log")
    if ! grep -q "^exit=0" "$log" && [ "$f" -eq 0 ]; then f=1; fi
    [ "$f" -eq 0 ] || grep -E "^(not ok|#)" "$log" | tail -20
    [ "$f" -eq 0 ] || tail -30 "$log"
    record "$suite" "$p" "$f"
}

# Counts from pg_regress / pg_isolation_regress output ("All 15 tests passed."
# or "2 of 15 tests failed."); a run that printed neither counts as one failure.
count_regress() {
    local log=$1 total bad
    if grep -q "All [0-9]* tests passed" "$log"; then
        total=$(grep -o "All [0-9]* tests passed" "$log" | grep -o "[0-9]*")
        echo "$total 0"
    elif grep -q "[0-9]* of [0-9]* tests failed" "$log"; then
        read -r bad total < <(grep -o "[0-9]* of [0-9]* tests failed" "$log" | awk '{print $1, $3}')
        echo "$((total - bad)) $bad"
    else
        echo "0 1"
    fi
}

echo "== unit tests (GoogleTest via CMake/ctest)"
if cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$logs/cmake.log" 2>&1 &&
   cmake --build build -j2 >>"$logs/cmake.log" 2>&1; then
    ctest --test-dir build -L unit --output-on-failure >"$logs/unit.log" 2>&1
    tail -3 "$logs/unit.log"
    if line=$(grep -o "[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*" "$logs/unit.log"); then
        read -r bad total < <(echo "$line" | awk '{print $4, $9}')
        record unit $((total - bad)) "$bad"
    else
        record unit 0 1
    fi
else
    tail -20 "$logs/cmake.log"
    record unit 0 1
fi

# Everything that needs a server runs in one throwaway cluster with the library
# preloaded; each suite writes its log, counted below.
echo "== PostgreSQL suites (pg_virtualenv, shared_preload_libraries=claimqueue)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=100 -o wal_level=logical bash -c '
    cd "$1"; logs="$2"
    echo "-- pg_regress";  make -s installcheck ISOLATION=   >"$logs/regress.log" 2>&1; tail -3 "$logs/regress.log"
    echo "-- isolation";   make -s installcheck REGRESS=     >"$logs/isolation.log" 2>&1; tail -3 "$logs/isolation.log"
    echo "-- pgTAP";       bash test/pgtap/run.sh            >"$logs/pgtap.log" 2>&1; echo "exit=$?" >>"$logs/pgtap.log"; tail -4 "$logs/pgtap.log"
    echo "-- stress";      bash test/stress/run.sh           >"$logs/stress.log" 2>&1; echo "exit=$?" >>"$logs/stress.log"; tail -12 "$logs/stress.log"
    echo "-- node worker"; bash test/node/run.sh             >"$logs/node.log" 2>&1; echo "exit=$?" >>"$logs/node.log"; tail -3 "$logs/node.log"
    echo "-- upgrade";     bash test/upgrade/run.sh          >"$logs/upgrade.log" 2>&1; echo "exit=$?" >>"$logs/upgrade.log"; tail -3 "$logs/upgrade.log"
    echo "-- dump";        bash test/dump/run.sh             >"$logs/dump.log" 2>&1; echo "exit=$?" >>"$logs/dump.log"; tail -2 "$logs/dump.log"
    echo "-- settings";    bash test/settings/run.sh         >"$logs/settings.log" 2>&1; echo "exit=$?" >>"$logs/settings.log"; tail -2 "$logs/settings.log"
    true
' _ "$root" "$logs"

read -r p f < <(count_regress "$logs/regress.log"); record pg_regress "$p" "$f"
[ "$f" -eq 0 ] || cat regression.diffs 2>/dev/null | head -100
read -r p f < <(count_regress "$logs/isolation.log"); record isolation "$p" "$f"
[ "$f" -eq 0 ] || cat output_iso/regression.diffs 2>/dev/null | head -100

if grep -q "^Result: PASS" "$logs/pgtap.log" && grep -q "^exit=0" "$logs/pgtap.log"; then
    total=$(grep -o "Tests=[0-9]*" "$logs/pgtap.log" | tail -1 | grep -o "[0-9]*")
    record pgtap "${total:-0}" 0
else
    total=$(grep -o "Tests=[0-9]*" "$logs/pgtap.log" | tail -1 | grep -o "[0-9]*")
    bad=$(grep -o "Failed [0-9]*/" "$logs/pgtap.log" | grep -o "[0-9]*" | awk '{s+=$1} END {print s+0}')
    [ "$bad" -gt 0 ] || bad=1
    tail -40 "$logs/pgtap.log"
    record pgtap $(( ${total:-0} > bad ? ${total:-0} - bad : 0 )) "$bad"
fi

if grep -q "^exit=0" "$logs/stress.log"; then record stress 1 0; else tail -40 "$logs/stress.log"; record stress 0 1; fi
if grep -q "^exit=0" "$logs/node.log"; then record node_worker 1 0; else tail -40 "$logs/node.log"; record node_worker 0 1; fi
if grep -q "^exit=0" "$logs/upgrade.log"; then record upgrade 1 0; else tail -40 "$logs/upgrade.log"; record upgrade 0 1; fi
if grep -q "^exit=0" "$logs/dump.log"; then record dump 1 0; else tail -40 "$logs/dump.log"; record dump 0 1; fi
record_tap settings "$logs/settings.log"

echo "== no-preload check (cluster without shared_preload_libraries)"
if pg_virtualenv -t bash test/no_preload/run.sh >"$logs/no_preload.log" 2>&1; then
    record no_preload 1 0
else
    tail -40 "$logs/no_preload.log"
    record no_preload 0 1
fi

echo "== fault-injection soak (a cluster of its own: it is stopped with -m immediate mid-run)"
SOAK_JOBS=${SOAK_JOBS:-10000} SOAK_RESTART=1 \
    pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/soak/run.sh >"$logs/soak.log" 2>&1
echo "exit=$?" >>"$logs/soak.log"
grep -E "^(soak|faults)" "$logs/soak.log"
if grep -q "^exit=0" "$logs/soak.log"; then record soak 1 0; else tail -30 "$logs/soak.log"; record soak 0 1; fi

echo "== reaper lifecycle (a cluster of its own: it restarts, crashes and promotes servers)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_prepared_transactions=4 bash test/reaper/run.sh >"$logs/reaper.log" 2>&1
echo "exit=$?" >>"$logs/reaper.log"
record_tap reaper "$logs/reaper.log"

echo "== waiting dequeue (a cluster of its own: four waiter slots, background waiters)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o claimqueue.max_waiters=4 \
    bash test/wait/run.sh >"$logs/wait.log" 2>&1
echo "exit=$?" >>"$logs/wait.log"
record_tap wait "$logs/wait.log"

echo "== claim cursor table (a cluster of its own: room for four queues)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o claimqueue.claim_cursor_queues=4 \
    bash test/cursors/run.sh >"$logs/cursors.log" 2>&1
echo "exit=$?" >>"$logs/cursors.log"
record_tap cursors "$logs/cursors.log"

echo "== liveness soak (a cluster of its own: claims never stop under a held snapshot)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=50 \
    bash test/liveness/run.sh >"$logs/liveness.log" 2>&1
echo "exit=$?" >>"$logs/liveness.log"
grep -E "^# (prefilled|window)" "$logs/liveness.log" | tail -3
record_tap liveness "$logs/liveness.log"

echo "== client libraries (a cluster of their own: each package's tests, the fault test for each worker)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=100 bash -c '
    cd "$1"; logs="$2"
    echo "-- node client";   (cd clients/node && npm run -s build && node --test test/*.test.mjs) >"$logs/node_client.log" 2>&1
    echo "exit=$?" >>"$logs/node_client.log"; grep -E "^# (pass|fail) " "$logs/node_client.log"
    echo "-- python client"; (cd clients/python && /usr/bin/python3 -m pytest -q -p no:cacheprovider tests) >"$logs/python_client.log" 2>&1
    echo "exit=$?" >>"$logs/python_client.log"; grep -E "[0-9]+ (passed|failed)" "$logs/python_client.log" | tail -1
    echo "-- fault node";    bash test/clients/run.sh node >"$logs/fault_node.log" 2>&1; echo "exit=$?" >>"$logs/fault_node.log"
    grep "^fault node:" "$logs/fault_node.log" | tail -1
    echo "-- fault python";  bash test/clients/run.sh python >"$logs/fault_python.log" 2>&1; echo "exit=$?" >>"$logs/fault_python.log"
    grep "^fault python:" "$logs/fault_python.log" | tail -1
    echo "-- fault python-async"; bash test/clients/run.sh python-async >"$logs/fault_python_async.log" 2>&1
    echo "exit=$?" >>"$logs/fault_python_async.log"; grep "^fault python-async:" "$logs/fault_python_async.log" | tail -1
    true
' _ "$root" "$logs"

# node --test prints "# pass N" and "# fail N"; no such line, or a non-zero exit
# without a failure counted, is one failure.
p=$(grep -o "^# pass [0-9]*" "$logs/node_client.log" | grep -o "[0-9]*$")
f=$(grep -o "^# fail [0-9]*" "$logs/node_client.log" | grep -o "[0-9]*$")
if [ -z "$p" ] || [ -z "$f" ]; then p=${p:-0}; f=1; fi
if ! grep -q "^exit=0" "$logs/node_client.log" && [ "$f" -eq 0 ]; then f=1; fi
[ "$f" -eq 0 ] || grep -E "^not ok|error" "$logs/node_client.log" | head -20
record node_client "$p" "$f"

# pytest's closing line: "N passed", "M failed", "K error(s)".
line=$(grep -E "[0-9]+ (passed|failed|errors?)" "$logs/python_client.log" | tail -1)
p=$(grep -oE "[0-9]+ passed" <<<"$line" | grep -oE "[0-9]+"); p=${p:-0}
f=$(grep -oE "[0-9]+ (failed|errors?)" <<<"$line" | grep -oE "[0-9]+" | awk '{s+=$1} END {print s+0}')
if ! grep -q "^exit=0" "$logs/python_client.log" && [ "$f" -eq 0 ]; then f=1; fi
[ "$f" -eq 0 ] || tail -40 "$logs/python_client.log"
record python_client "$p" "$f"

record_tap fault_node "$logs/fault_node.log"
record_tap fault_python "$logs/fault_python.log"
record_tap fault_py_async "$logs/fault_python_async.log"

echo
echo "== summary (logs in build/test-logs)"
printf '%s\n' "${summary[@]}"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
