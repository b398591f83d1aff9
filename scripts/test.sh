#!/usr/bin/env bash
# Runs every claimqueue test on this machine: installs what is missing, builds,
# installs, then runs the C++ unit tests (ctest); in one throwaway cluster
# (pg_virtualenv) the pg_regress files and the isolation specs (make
# installcheck), the pgTAP contract, the stress test, the node-postgres worker
# and the upgrade test; the fault-injection soak in a cluster of its own; the
# Perl TAP suites (test/perl, PostgreSQL::Test::Cluster), which start their
# own servers: settings, pg_dump, no-preload, claim cursors, waiting dequeue,
# the reaper's lifecycle and the liveness soak; and the client libraries
# (clients/node, clients/python: their own tests and the same fault test in
# each language). Ends with
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

# record_prove SUITE LOG: counts from a TAP harness's summary (prove, pg_prove):
# "Tests=N" subtests ran, of which the "Failed: F" of each failing file failed.
# A run without "Result: PASS" and no failed subtest (a script that died, a
# wrong plan, no summary at all) counts as one failure.
record_prove() {
    local suite=$1 log=$2 total bad
    total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$log" | tail -1)
    bad=$(grep -o "Failed: [0-9]*)" "$log" | grep -o "[0-9]*" | awk '{s += $1} END {print s + 0}')
    if ! grep -q "^Result: PASS" "$log"; then
        [ "$bad" -gt 0 ] || bad=1
        grep -E "^(not ok|#)" "$log" | tail -20
        tail -15 "$log"
    fi
    record "$suite" $(( ${total:-0} > bad ? ${total:-0} - bad : 0 )) "$bad"
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

# The suites that share a server run in one throwaway cluster with the library
# preloaded; each writes its log, counted below. (TAP_TESTS= keeps make
# installcheck to pg_regress and isolation here: the Perl suites run below.)
echo "== PostgreSQL suites (pg_virtualenv, shared_preload_libraries=claimqueue)"
pg_virtualenv -t -o shared_preload_libraries=claimqueue -o max_connections=100 -o wal_level=logical bash -c '
    cd "$1"; logs="$2"
    echo "-- pg_regress";  make -s installcheck ISOLATION= TAP_TESTS= >"$logs/regress.log" 2>&1; tail -3 "$logs/regress.log"
    echo "-- isolation";   make -s installcheck REGRESS= TAP_TESTS=   >"$logs/isolation.log" 2>&1; tail -3 "$logs/isolation.log"
    echo "-- pgTAP";       bash test/pgtap/run.sh            >"$logs/pgtap.log" 2>&1; tail -4 "$logs/pgtap.log"
    echo "-- stress";      bash test/stress/run.sh           >"$logs/stress.log" 2>&1; echo "exit=$?" >>"$logs/stress.log"; tail -12 "$logs/stress.log"
    echo "-- node worker"; bash test/node/run.sh             >"$logs/node.log" 2>&1; echo "exit=$?" >>"$logs/node.log"; tail -3 "$logs/node.log"
    echo "-- upgrade";     bash test/upgrade/run.sh          >"$logs/upgrade.log" 2>&1; echo "exit=$?" >>"$logs/upgrade.log"; tail -3 "$logs/upgrade.log"
    true
' _ "$root" "$logs"

read -r p f < <(count_regress "$logs/regress.log"); record pg_regress "$p" "$f"
[ "$f" -eq 0 ] || cat regression.diffs 2>/dev/null | head -100
read -r p f < <(count_regress "$logs/isolation.log"); record isolation "$p" "$f"
[ "$f" -eq 0 ] || cat output_iso/regression.diffs 2>/dev/null | head -100
record_prove pgtap "$logs/pgtap.log"
if grep -q "^exit=0" "$logs/stress.log"; then record stress 1 0; else tail -40 "$logs/stress.log"; record stress 0 1; fi
if grep -q "^exit=0" "$logs/node.log"; then record node_worker 1 0; else tail -40 "$logs/node.log"; record node_worker 0 1; fi
if grep -q "^exit=0" "$logs/upgrade.log"; then record upgrade 1 0; else tail -40 "$logs/upgrade.log"; record upgrade 0 1; fi

echo "== fault-injection soak (a cluster of its own: it is stopped with -m immediate mid-run)"
SOAK_JOBS=${SOAK_JOBS:-10000} SOAK_RESTART=1 \
    pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/soak/run.sh >"$logs/soak.log" 2>&1
echo "exit=$?" >>"$logs/soak.log"
grep -E "^(soak|faults)" "$logs/soak.log"
if grep -q "^exit=0" "$logs/soak.log"; then record soak 1 0; else tail -30 "$logs/soak.log"; record soak 0 1; fi

# The Perl TAP suites start their own servers (PostgreSQL::Test::Cluster)
# through PGXS's make installcheck, which puts the server's bin directory on
# PATH and its test modules on prove's include path. initdb refuses root, so
# as root they run as postgres, in a copy of the files they read (a clone
# under /root is not readable by postgres); otherwise as the calling user.
echo "== Perl TAP suites (test/perl: each starts servers of its own)"
tapdir=$(mktemp -d /tmp/claimqueue-tap.XXXXXX)
cp -r Makefile claimqueue.control README.md "$tapdir"/
mkdir -p "$tapdir/test/upgrade" && cp -r test/perl test/lib "$tapdir/test/" &&
    cp -r test/upgrade/released "$tapdir/test/upgrade/"
as_tester=()
if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres "$tapdir"
    as_tester=(runuser -u postgres --)
fi
for suite in settings dump no_preload cursors wait reaper liveness; do
    echo "-- $suite"
    "${as_tester[@]}" make -s -C "$tapdir" installcheck REGRESS= ISOLATION= \
        PROVE_TESTS="test/perl/$suite.pl" PROVE_FLAGS=--verbose >"$logs/$suite.log" 2>&1
    # The framework's logs: the script's own (regress_log_*) and each server's.
    rm -rf "$logs/$suite" && cp -r "$tapdir/tmp_check/log" "$logs/$suite" 2>/dev/null
    grep -E "^# (prefilled|window)" "$logs/$suite.log" | tail -3
    grep -E "^(Files=|Result:)" "$logs/$suite.log"
    record_prove "$suite" "$logs/$suite.log"
done
rm -rf "$tapdir"

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
