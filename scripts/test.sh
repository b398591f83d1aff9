#!/usr/bin/env bash
# Runs every claimqueue test against one PostgreSQL major: installs what is
# missing, builds, installs, then runs the C++ unit tests (ctest); in one
# throwaway cluster (pg_virtualenv) the pg_regress files and the isolation specs
# (make installcheck), the pgTAP contract, the stress test, the node-postgres
# worker, the upgrade test and the documents test (test/docs: the API's
# entries, the links, the README's workers); the fault-injection soak in a
# cluster of its own; pg_regress and isolation again under a reaper passing
# every 10 ms; the Perl TAP suites (test/perl, PostgreSQL::Test::Cluster),
# which start their own servers: settings, pg_dump, no-preload, claim cursors, waiting
# dequeue, the reaper's lifecycle, a rolling restart onto this library of a
# database at the previous release, queue metrics, the liveness soak, claims
# that die with their session (disconnect) and the concurrency limits across a
# restart (limits); the client libraries
# (clients/node, clients/python: their own tests, python_schema the Python
# tests again with the extension in a schema of its own, and the same fault test in
# each language); the Prometheus exporter with contrib/prometheus (test/prometheus,
# a cluster of its own); on the host also the PGXN release zip (test/pgxn), in
# a Debian root also the Debian package (test/package); the command line and
# the dashboard in a browser (clients/dashboard: cli, dashboard); from
# PostgreSQL 16 on, the distributed mode on a Citus cluster (test/citus: Citus
# built once per root from CITUS_TARBALL, or the one installed).
# Ends with "tests: N passed, M failed".
#
#   scripts/test.sh                  PostgreSQL 15, Debian 12's, on this machine
#   scripts/test.sh --pg 17          PostgreSQL 17 (18) in a Debian trixie (sid) root
#                                    that scripts/chroot.sh makes or reuses
#   scripts/test.sh --pg 15 --chroot PostgreSQL 15 in a Debian 12 root
#   scripts/test.sh --pg-upgrade     pg_upgrade from 15 to 17 (test/pg_upgrade), in a root
#   --skip a,b   --only a,b          leave out / run only these suites (names as in the summary)
#
#   STRESS_JOBS=50000   jobs drained by the stress test
#   SOAK_JOBS=10000     jobs drained by the fault-injection soak (test/soak/run.sh alone: 100000)
#   FAULT_JOBS=5000     jobs drained by each client fault test (test/clients/run.sh)
#   CLAIMQUEUE_CHROOTS  where the Debian roots are kept (default /var/cache/claimqueue-chroots)
#   CITUS_TARBALL       Citus's source tarball, built for the citus suite (test/citus/build.sh);
#                       without it the suite runs only where Citus is installed
set -uo pipefail
# A relative CITUS_TARBALL names a file from where the script was started.
[ -n "${CITUS_TARBALL:-}" ] && [ -e "$CITUS_TARBALL" ] && CITUS_TARBALL=$(realpath "$CITUS_TARBALL")
cd "$(dirname "$0")/.."
root=$(pwd)

host_major=15        # what Debian 12, the host, ships
major=$host_major
where=host           # host | chroot (delegate to a root) | root (we are in one)
pg_upgrade=0
prepare=0
skip=","
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --pg) major=$2; shift 2 ;;
        --pg=*) major=${1#--pg=}; shift ;;
        --chroot) where=chroot; shift ;;
        --in-root) where=root; shift ;;       # set by the delegating run, not by hand
        --pg-upgrade) pg_upgrade=1; shift ;;
        --prepare) prepare=1; shift ;;        # in a root: fetch what the tests need, run none
        --skip) skip=",$2,"; shift 2 ;;
        --only) only=",$2,"; shift 2 ;;
        *) echo "usage: $0 [--pg N] [--chroot] [--pg-upgrade] [--skip a,b] [--only a,b]" >&2; exit 2 ;;
    esac
done
case "$major" in [0-9][0-9]) ;; *) echo "test: --pg takes a major such as 17" >&2; exit 2 ;; esac
[ "$where" = host ] && [ "$major" != "$host_major" ] && where=chroot
# The package test runs in a root only: on the host it would build and
# install into the host's PostgreSQL and then test nothing.
if [ "$where" = host ] && [ "$only" = ",package," ]; then
    echo "test: the package test runs in a Debian root: add --chroot" >&2
    exit 2
fi
[ "$pg_upgrade" = 1 ] && [ "$where" != root ] && where=chroot

# want SUITE: whether --only / --skip let it run.
want() {
    [ -n "$only" ] && { [[ "$only" == *",$1,"* ]]; return; }
    [[ "$skip" != *",$1,"* ]]
}

# The other majors run in a Debian root: make or reuse it, copy this tree into
# it, run this script there, and keep its logs in build/test-logs/pgN.
if [ "$where" = chroot ]; then
    name=$major
    [ "$pg_upgrade" = 1 ] && name=upgrade
    cache=${CLAIMQUEUE_CHROOTS:-/var/cache/claimqueue-chroots}
    t0=$SECONDS
    bash scripts/chroot.sh create "$name" >/dev/null || exit 1
    bash scripts/chroot.sh sync "$name" || exit 1
    # Citus's source goes into the root (once), and the run there is told where.
    if want citus && [ -n "${CITUS_TARBALL:-}" ] && [ -r "$CITUS_TARBALL" ]; then
        in_root=/var/cache/claimqueue-citus/$(basename "$CITUS_TARBALL")
        mkdir -p "$cache/$name/var/cache/claimqueue-citus"
        cmp -s "$CITUS_TARBALL" "$cache/$name$in_root" || cp "$CITUS_TARBALL" "$cache/$name$in_root"
        export CITUS_TARBALL=$in_root
    else
        export CITUS_TARBALL=
    fi
    echo "== root $cache/$name ready in $((SECONDS - t0)) s"
    args=(--pg "$major" --in-root)
    [ "$pg_upgrade" = 1 ] && args+=(--pg-upgrade)
    [ "$skip" != "," ] && args+=(--skip "${skip:1:-1}")
    [ -n "$only" ] && args+=(--only "${only:1:-1}")
    # Two runs: one with the network, which installs packages and node modules;
    # then the tests, in a network namespace of their own (loopback only), so
    # their servers take ports without meeting the host's.
    t0=$SECONDS
    bash scripts/chroot.sh run "$name" bash scripts/test.sh "${args[@]}" --prepare || exit 1
    echo "== prepared in $((SECONDS - t0)) s"
    bash scripts/chroot.sh offline "$name" bash scripts/test.sh "${args[@]}"
    rc=$?
    mkdir -p build/test-logs
    rm -rf "build/test-logs/$name"
    cp -r "$cache/$name/src/claimqueue/build/test-logs" "build/test-logs/$name" 2>/dev/null
    echo "(logs of that run in build/test-logs/$name)"
    exit $rc
fi

logs="$root/build/test-logs"
# A fresh directory: a suite that could not run must not count an older log.
[ "$prepare" = 1 ] || rm -rf "$logs"
mkdir -p "$logs"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# The package test alone needs only the server and its headers.
deps_set=all
[ "$only" = ",package," ] && deps_set=server

# In a root, the run with the network: packages (scripts/deps.sh, the package
# test's build tools) and the node tests' modules.
if [ "$prepare" = 1 ]; then
    if [ "$pg_upgrade" = 1 ]; then
        PG_MAJOR=15 bash scripts/deps.sh && PG_MAJOR=17 bash scripts/deps.sh
        exit
    fi
    PG_MAJOR=$major DEPS=$deps_set bash scripts/deps.sh || exit 1
    if want node_worker || want soak; then
        for d in examples/node-worker test/soak; do
            # One retry: the registry is across the network.
            (cd "$d" && { npm install --no-audit --no-fund >"$logs/npm.log" 2>&1 ||
                          npm install --no-audit --no-fund >"$logs/npm.log" 2>&1; }) ||
                { tail -20 "$logs/npm.log"; echo "npm install in $d failed"; exit 1; }
        done
    fi
    if want node_pack; then
        # One retry: the registry is across the network.
        bash test/node/pack.sh --warm-cache || bash test/node/pack.sh --warm-cache ||
            { echo "npm install of pg@8 (test/node/pack.sh --warm-cache) failed"; exit 1; }
    fi
    if want package; then bash test/package/run.sh "$major" --deps || exit 1; fi
    # Citus, built once per root (a stamp beside the installed library).
    if want citus && [ "$major" -ge 16 ] && [ -n "${CITUS_TARBALL:-}" ]; then
        PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config bash test/citus/build.sh --deps &&
            PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config bash test/citus/build.sh || exit 1
    fi
    exit 0
fi

# pg_upgrade from 15 to 17 has a test of its own, in the "upgrade" root.
if [ "$pg_upgrade" = 1 ]; then
    bash test/pg_upgrade/run.sh 15 17 2>&1 | tee "$logs/pg_upgrade.log"
    rc=${PIPESTATUS[0]}
    p=$(grep -c "^ok " "$logs/pg_upgrade.log")
    f=$(grep -c "^not ok " "$logs/pg_upgrade.log")
    [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
    echo "tests: $p passed, $f failed"
    [ "$f" -eq 0 ]
    exit
fi

# Every PostgreSQL program below is this major's: pg_config, psql, pgbench,
# pg_isolation_regress (through PG_CONFIG), pg_virtualenv -v.
export PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
export PATH=/usr/lib/postgresql/$major/bin:$PATH

t0=$SECONDS
PG_MAJOR=$major DEPS=$deps_set bash scripts/deps.sh || exit 1
# On the host, which has the network, as a root's --prepare run does: npm's
# cache gets the metadata of pg@8, which test/node/pack.sh installs offline
# (a new machine's cache has only the tarballs npm ci fetched).
if [ "$where" = host ] && want node_pack; then
    # One retry: the registry is across the network.
    bash test/node/pack.sh --warm-cache || bash test/node/pack.sh --warm-cache ||
        { echo "npm install of pg@8 (test/node/pack.sh --warm-cache) failed"; exit 1; }
fi
t_deps=$((SECONDS - t0)); t0=$SECONDS
make -s -j2 || exit 1
$SUDO make -s install || exit 1
t_build=$((SECONDS - t0))
echo "== PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}') ($where): deps ${t_deps} s, build and install ${t_build} s"

passed=0
failed=0
summary=()

# record SUITE PASSED FAILED SECONDS
record() {
    passed=$((passed + $2))
    failed=$((failed + $3))
    summary+=("$(printf '%-12s %5d passed, %d failed   %4d s' "$1" "$2" "$3" "$4")")
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

# count_tap LOG: "passed failed" from a script's "ok"/"not ok" lines and its
# exit status (appended as exit=N); a failed exit with no "not ok" is one failure.
count_tap() {
    local log=$1 p f
    p=$(grep -c "^ok " "$log")
    f=$(grep -c "^not ok " "$log")
    if ! grep -q "^exit=0" "$log" && [ "$f" -eq 0 ]; then f=1; fi
    echo "$p $f"
}

# count_node_test LOG: "passed failed" from node --test's TAP reporter (newer
# nodes default to another one off a terminal): "# pass N" and "# fail N"; no
# such line, or a failed exit (appended as exit=N) with no failure counted, is
# one failure.
count_node_test() {
    local log=$1 p f
    p=$(grep -o "^# pass [0-9]*" "$log" | grep -o "[0-9]*$")
    f=$(grep -o "^# fail [0-9]*" "$log" | grep -o "[0-9]*$")
    if [ -z "$p" ] || [ -z "$f" ]; then p=${p:-0}; f=1; fi
    if ! grep -q "^exit=0" "$log" && [ "$f" -eq 0 ]; then f=1; fi
    echo "$p $f"
}

# record_prove SUITE LOG SECONDS: counts from a TAP harness's summary (prove,
# pg_prove): "Tests=N" subtests ran, of which the "Failed: F" of each failing
# file failed. A run without "Result: PASS" and no failed subtest (a script
# that died, a wrong plan, no summary at all) counts as one failure.
record_prove() {
    local suite=$1 log=$2 secs=$3 total bad
    total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$log" | tail -1)
    bad=$(grep -o "Failed: [0-9]*)" "$log" | grep -o "[0-9]*" | awk '{s += $1} END {print s + 0}')
    if ! grep -q "^Result: PASS" "$log"; then
        [ "$bad" -gt 0 ] || bad=1
        grep -E "^(not ok|#)" "$log" | tail -20
        tail -15 "$log"
    fi
    record "$suite" $(( ${total:-0} > bad ? ${total:-0} - bad : 0 )) "$bad" "$secs"
}

# A script that passes or fails as a whole (exit=0 appended to its log).
record_exit() {
    local name=$1 log=$2 secs=$3
    if grep -q "^exit=0" "$log"; then record "$name" 1 0 "$secs"; else tail -40 "$log"; record "$name" 0 1 "$secs"; fi
}

secs_of() { cat "$logs/$1.time" 2>/dev/null || echo 0; }

if want unit; then
    echo "== unit tests (GoogleTest via CMake/ctest)"
    t0=$SECONDS
    if cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_CONFIG="$PG_CONFIG" >"$logs/cmake.log" 2>&1 &&
       cmake --build build -j2 >>"$logs/cmake.log" 2>&1; then
        ctest --test-dir build -L unit --output-on-failure >"$logs/unit.log" 2>&1
        tail -3 "$logs/unit.log"
        if line=$(grep -o "[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*" "$logs/unit.log"); then
            read -r bad total < <(echo "$line" | awk '{print $4, $9}')
            record unit $((total - bad)) "$bad" $((SECONDS - t0))
        else
            record unit 0 1 $((SECONDS - t0))
        fi
    else
        tail -20 "$logs/cmake.log"
        record unit 0 1 $((SECONDS - t0))
    fi
fi

# Everything that needs a server but not a cluster of its own runs in one
# throwaway cluster with the library preloaded; each suite writes its log and
# its duration (NAME.time), counted below.
# The server settings of that cluster (the busy_reaper suite's adds one).
suite_server=(-o shared_preload_libraries=claimqueue -o max_connections=100 -o wal_level=logical)
shared=()
for s in pg_regress isolation pgtap stress node_worker upgrade documents; do want "$s" && shared+=("$s"); done
if [ ${#shared[@]} -gt 0 ]; then
    echo "== PostgreSQL suites (pg_virtualenv, shared_preload_libraries=claimqueue)"
    pg_virtualenv -v "$major" -t "${suite_server[@]}" bash -c '
        cd "$1"; logs="$2"; shift 2
        for s in "$@"; do
            echo "-- $s"
            t0=$SECONDS
            case "$s" in
                # (TAP_TESTS= keeps make installcheck to pg_regress and
                # isolation here: the Perl suites run below.)
                pg_regress)  make -s installcheck ISOLATION= TAP_TESTS= >"$logs/$s.log" 2>&1; tail -3 "$logs/$s.log" ;;
                isolation)   make -s installcheck REGRESS= TAP_TESTS=   >"$logs/$s.log" 2>&1; tail -3 "$logs/$s.log" ;;
                pgtap)       bash test/pgtap/run.sh  >"$logs/$s.log" 2>&1; tail -4 "$logs/$s.log" ;;
                stress)      { bash test/stress/run.sh && bash test/stress/limits.sh && bash test/stress/fair.sh; } >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"; tail -12 "$logs/$s.log" ;;
                node_worker) bash test/node/run.sh   >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"; tail -3 "$logs/$s.log" ;;
                upgrade)     bash test/upgrade/run.sh >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"; tail -3 "$logs/$s.log" ;;
                documents)   bash test/docs/run.sh    >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"; grep -E "^(not ok|#  )" "$logs/$s.log" | head -20; echo "documents: $(grep -c "^ok " "$logs/$s.log") ok, $(grep -c "^not ok " "$logs/$s.log") not ok" ;;
            esac
            echo $((SECONDS - t0)) >"$logs/$s.time"
        done
        true
    ' _ "$root" "$logs" "${shared[@]}"
fi

if want pg_regress; then
    read -r p f < <(count_regress "$logs/pg_regress.log"); record pg_regress "$p" "$f" "$(secs_of pg_regress)"
    [ "$f" -eq 0 ] || head -100 regression.diffs 2>/dev/null
fi
if want isolation; then
    read -r p f < <(count_regress "$logs/isolation.log"); record isolation "$p" "$f" "$(secs_of isolation)"
    [ "$f" -eq 0 ] || head -100 output_iso/regression.diffs 2>/dev/null
fi
want pgtap && record_prove pgtap "$logs/pgtap.log" "$(secs_of pgtap)"
for s in stress node_worker upgrade; do
    want "$s" && record_exit "$s" "$logs/$s.log" "$(secs_of "$s")"
done
if want documents; then
    read -r p f < <(count_tap "$logs/documents.log"); record documents "$p" "$f" "$(secs_of documents)"
fi

if want soak; then
    echo "== fault-injection soak (a cluster of its own: it is stopped with -m immediate mid-run)"
    t0=$SECONDS
    SOAK_JOBS=${SOAK_JOBS:-10000} SOAK_RESTART=1 \
        pg_virtualenv -v "$major" -t -o shared_preload_libraries=claimqueue bash test/soak/run.sh >"$logs/soak.log" 2>&1
    echo "exit=$?" >>"$logs/soak.log"
    grep -E "^(soak|faults)" "$logs/soak.log"
    record_exit soak "$logs/soak.log" $((SECONDS - t0))
fi

# The pg_regress files and isolation specs again, with the background reaper
# passing every 10 ms instead of every second: a test whose statements the
# reaper can come between (a purge, a sweep, an open snapshot under VACUUM)
# fails here most runs instead of once in many CI runs. reaper_stats shows
# the interval's setting, so it is left out.
if want busy_reaper; then
    echo "== pg_regress and isolation under a busy reaper (claimqueue.reaper_interval = 10ms)"
    t0=$SECONDS
    pg_virtualenv -v "$major" -t "${suite_server[@]}" -o claimqueue.reaper_interval=10 bash -c '
        make -s installcheck REGRESS_SKIP=reaper_stats ISOLATION= TAP_TESTS= >"$1/busy_reaper.log" 2>&1
        make -s installcheck REGRESS= TAP_TESTS= >"$1/busy_reaper_isolation.log" 2>&1
        true' _ "$logs"
    read -r p f < <(count_regress "$logs/busy_reaper.log")
    read -r ip if_ < <(count_regress "$logs/busy_reaper_isolation.log")
    grep -hE "tests (passed|failed)" "$logs/busy_reaper.log" "$logs/busy_reaper_isolation.log"
    [ "$f" -eq 0 ] || head -100 regression.diffs 2>/dev/null
    [ "$if_" -eq 0 ] || head -100 output_iso/regression.diffs 2>/dev/null
    record busy_reaper $((p + ip)) $((f + if_)) $((SECONDS - t0))
fi

# The Perl TAP suites start their own servers (PostgreSQL::Test::Cluster)
# through PGXS's make installcheck, which puts this major's bin directory on
# PATH and its test modules on prove's include path. initdb refuses root, so
# as root they run as postgres, in a copy of the files they read (a clone
# under /root is not readable by postgres); otherwise as the calling user.
perl_suites=()
for s in settings dump no_preload cursors wait reaper rolling metrics liveness disconnect limits; do want "$s" && perl_suites+=("$s"); done
if [ ${#perl_suites[@]} -gt 0 ]; then
    echo "== Perl TAP suites (test/perl: each starts servers of its own)"
    tapdir=$(mktemp -d /tmp/claimqueue-tap.XXXXXX)
    cp -r Makefile claimqueue.control README.md docs "$tapdir"/
    mkdir -p "$tapdir/test/upgrade" && cp -r test/perl test/lib "$tapdir/test/" &&
        cp -r test/upgrade/released "$tapdir/test/upgrade/"
    as_tester=()
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres "$tapdir"
        as_tester=(runuser -u postgres --)
    fi
    for suite in "${perl_suites[@]}"; do
        echo "-- $suite"
        t0=$SECONDS
        "${as_tester[@]}" make -s -C "$tapdir" installcheck REGRESS= ISOLATION= PG_CONFIG="$PG_CONFIG" \
            PROVE_TESTS="test/perl/$suite.pl" PROVE_FLAGS=--verbose >"$logs/$suite.log" 2>&1
        # The framework's logs: the script's own (regress_log_*) and each server's.
        rm -rf "${logs:?}/$suite" && cp -r "$tapdir/tmp_check/log" "$logs/$suite" 2>/dev/null
        grep -E "^# (prefilled|window)" "$logs/$suite.log" | tail -3
        grep -E "^(Files=|Result:)" "$logs/$suite.log"
        record_prove "$suite" "$logs/$suite.log" $((SECONDS - t0))
    done
    rm -rf "$tapdir"
fi

# The client libraries, in a cluster of their own: each package's tests and
# the fault test for each worker.
clients=()
for s in node_client node_client_schema node_pack python_client python_schema fault_node fault_python fault_py_async; do want "$s" && clients+=("$s"); done
if [ ${#clients[@]} -gt 0 ]; then
    echo "== client libraries (a cluster of their own: each package's tests, the fault test for each worker)"
    pg_virtualenv -v "$major" -t -o shared_preload_libraries=claimqueue -o max_connections=100 bash -c '
        cd "$1"; logs="$2"; shift 2
        for s in "$@"; do
            echo "-- $s"
            t0=$SECONDS
            case "$s" in
                node_client|node_client_schema)
                    # node_client_schema: the same tests with the extension in a schema of
                    # its own (CREATE EXTENSION claimqueue SCHEMA cq), off the search_path of the library.
                    schema=; [ "$s" = node_client_schema ] && schema=cq
                    (cd clients/node && npm run -s build && CLAIMQUEUE_TEST_SCHEMA=$schema node --test --test-reporter=tap test/*.test.mjs) >"$logs/$s.log" 2>&1
                    echo "exit=$?" >>"$logs/$s.log"; grep -E "^# (pass|fail) " "$logs/$s.log" ;;
                node_pack)
                    bash test/node/pack.sh >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"
                    tail -1 "$logs/$s.log" ;;
                # python_schema: the same tests with the extension in schema cq
                # (CREATE EXTENSION claimqueue SCHEMA cq; tests/conftest.py).
                python_client|python_schema)
                    schema=""; [ "$s" = python_schema ] && schema=cq
                    (cd clients/python && CLAIMQUEUE_TEST_SCHEMA=$schema /usr/bin/python3 -m pytest -q -p no:cacheprovider tests) >"$logs/$s.log" 2>&1
                    echo "exit=$?" >>"$logs/$s.log"; grep -E "[0-9]+ (passed|failed)" "$logs/$s.log" | tail -1 ;;
                fault_node|fault_python|fault_py_async)
                    lang=${s#fault_}; [ "$lang" = py_async ] && lang=python-async
                    bash test/clients/run.sh "$lang" >"$logs/$s.log" 2>&1; echo "exit=$?" >>"$logs/$s.log"
                    grep "^fault $lang:" "$logs/$s.log" | tail -1 ;;
            esac
            echo $((SECONDS - t0)) >"$logs/$s.time"
        done
        true
    ' _ "$root" "$logs" "${clients[@]}"
fi
for s in node_client node_client_schema; do
    want "$s" || continue
    read -r p f < <(count_node_test "$logs/$s.log")
    # A failure with its diagnostics: each "not ok" line and its YAML block, up to "...".
    [ "$f" -eq 0 ] || awk '/^ *not ok / {show = 1} show {print} show && /^ *\.\.\.$/ {show = 0}' \
        "$logs/$s.log" | head -80
    record "$s" "$p" "$f" "$(secs_of "$s")"
done
for s in python_client python_schema; do
    want "$s" || continue
    # pytest's closing line: "N passed", "M failed", "K error(s)".
    line=$(grep -E "[0-9]+ (passed|failed|errors?)" "$logs/$s.log" | tail -1)
    p=$(grep -oE "[0-9]+ passed" <<<"$line" | grep -oE "[0-9]+"); p=${p:-0}
    f=$(grep -oE "[0-9]+ (failed|errors?)" <<<"$line" | grep -oE "[0-9]+" | awk '{s+=$1} END {print s+0}')
    if ! grep -q "^exit=0" "$logs/$s.log" && [ "$f" -eq 0 ]; then f=1; fi
    [ "$f" -eq 0 ] || tail -40 "$logs/$s.log"
    record "$s" "$p" "$f" "$(secs_of "$s")"
done
for s in node_pack fault_node fault_python fault_py_async; do
    if want "$s"; then
        read -r p f < <(count_tap "$logs/$s.log")
        [ "$f" -eq 0 ] || { grep -E "^(not ok|#)" "$logs/$s.log" | tail -20; tail -30 "$logs/$s.log"; }
        record "$s" "$p" "$f" "$(secs_of "$s")"
    fi
done

# The operators' tools (clients/dashboard), in a cluster of their own: the
# command line and the EXPLAIN of every page query (cli), the dashboard in
# Debian's chromium driven by playwright-core (dashboard; screenshots in
# build/dashboard). Counts from node --test's TAP ("# pass N", "# fail N").
# The browser suite runs once, against Debian 12's PostgreSQL (the host, or
# its root): the pages' queries are checked on every major by cli's EXPLAINs.
ops=()
want cli && ops+=(cli)
if want dashboard && [ "$major" != "$host_major" ]; then
    dashboard_skip="the browser suite runs against PostgreSQL $host_major only; cli checks the page queries here"
    echo "== dashboard: skipped: $dashboard_skip"
    summary+=("$(printf '%-12s skipped: %s' dashboard "$dashboard_skip")")
elif want dashboard; then
    ops+=(dashboard)
fi
if [ ${#ops[@]} -gt 0 ]; then
    echo "== command line and dashboard (clients/dashboard: a cluster of its own)"
    pg_virtualenv -v "$major" -t -o shared_preload_libraries=claimqueue -o max_connections=100 bash -c '
        cd "$1"; logs="$2"; shift 2
        for s in "$@"; do
            echo "-- $s"
            t0=$SECONDS
            case "$s" in
                cli)       files="test/cli.test.mjs test/explain.test.mjs" ;;
                dashboard) files="test/dashboard.test.mjs" ;;
            esac
            (cd clients/dashboard && { [ -d node_modules ] || PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent; } &&
                npm run -s build && node --test --test-reporter=tap $files) >"$logs/$s.log" 2>&1
            echo "exit=$?" >>"$logs/$s.log"; grep -E "^# (pass|fail) " "$logs/$s.log"
            echo $((SECONDS - t0)) >"$logs/$s.time"
        done
        true
    ' _ "$root" "$logs" "${ops[@]}"
    for s in "${ops[@]}"; do
        read -r p f < <(count_node_test "$logs/$s.log")
        [ "$f" -eq 0 ] || { grep -E "^not ok|Error|error:" "$logs/$s.log" | head -20; tail -30 "$logs/$s.log"; }
        record "$s" "$p" "$f" "$(secs_of "$s")"
    done
fi

# The PGXN release zip: made from the committed tree by git, so where there is
# a git checkout (the host, CI's clone); the roots get a copy without .git, and
# a tree unpacked from a release has none either: there it is skipped, said so.
pgxn_skip=""
if want pgxn && [ "$where" = host ]; then pgxn_skip=$(bash test/pgxn/run.sh --can-run 2>&1); fi
if [ -n "$pgxn_skip" ]; then
    echo "== PGXN release zip: skipped: $pgxn_skip"
    summary+=("$(printf '%-12s skipped: %s' pgxn "$pgxn_skip")")
elif want pgxn && [ "$where" = host ]; then
    echo "== PGXN release zip (make dist, then built and installed from a clean directory into a DESTDIR)"
    t0=$SECONDS
    bash test/pgxn/run.sh >"$logs/pgxn.log" 2>&1
    echo "exit=$?" >>"$logs/pgxn.log"
    read -r p f < <(count_tap "$logs/pgxn.log")
    [ "$f" -eq 0 ] || tail -30 "$logs/pgxn.log"
    record pgxn "$p" "$f" $((SECONDS - t0))
fi

# contrib/prometheus with Debian's prometheus-postgres-exporter: a cluster of
# its own, a known workload, the exporter on a loopback port, /metrics checked.
if want prometheus; then
    echo "== Prometheus exporter (contrib/prometheus/queries.yaml, scraped on loopback)"
    t0=$SECONDS
    bash test/prometheus/run.sh >"$logs/prometheus.log" 2>&1
    echo "exit=$?" >>"$logs/prometheus.log"
    read -r p f < <(count_tap "$logs/prometheus.log")
    [ "$f" -eq 0 ] || tail -40 "$logs/prometheus.log"
    record prometheus "$p" "$f" $((SECONDS - t0))
fi

# The distributed mode on a Citus cluster (a coordinator and two workers on
# loopback). Citus 14 supports PostgreSQL 16 to 18; 13.2, the last line for
# 15, does not build against Debian 12's headers. Citus is built from
# CITUS_TARBALL (in a root by the run with the network, above; here when it
# is set and Citus is missing), or used as installed.
citus_skip=""
if want citus; then
    if [ "$major" -lt 16 ]; then
        citus_skip="Citus has no release that builds for PostgreSQL $major here: the suite runs on 17 and 18"
    elif ! bash test/citus/build.sh --check; then
        if [ -n "${CITUS_TARBALL:-}" ] && [ "$where" = host ]; then
            bash test/citus/build.sh >"$logs/citus-build.log" 2>&1 || citus_skip="the Citus build failed ($logs/citus-build.log)"
        else
            citus_skip="Citus is not installed: install it from Citus's own packages, or set CITUS_TARBALL to its source tarball"
        fi
    fi
fi
if [ -n "$citus_skip" ]; then
    echo "== Citus cluster: skipped: $citus_skip"
    summary+=("$(printf '%-12s skipped: %s' citus "$citus_skip")")
elif want citus; then
    echo "== Citus cluster (a coordinator and two workers on loopback, shared_preload_libraries = 'citus,claimqueue')"
    t0=$SECONDS
    CITUS_LOGS="$logs/citus" bash test/citus/run.sh >"$logs/citus.log" 2>&1
    echo "exit=$?" >>"$logs/citus.log"
    read -r p f < <(count_tap "$logs/citus.log")
    [ "$f" -eq 0 ] || { grep -E "^(not ok|#)" "$logs/citus.log" | tail -20; tail -30 "$logs/citus.log"; }
    grep -E "^tests:" "$logs/citus.log" | sed 's/^/citus /'
    record citus "$p" "$f" $((SECONDS - t0))
    # The guarantees under faults, in a cluster of its own: the exactly-once
    # soak through the coordinator with worker backends terminated and a worker
    # restarted, a shard move with jobs running, a worker stopped.
    echo "== Citus cluster under faults (test/citus/faults.sh)"
    t0=$SECONDS
    CITUS_LOGS="$logs/citus-faults" bash test/citus/faults.sh >"$logs/citus-faults.log" 2>&1
    echo "exit=$?" >>"$logs/citus-faults.log"
    read -r p f < <(count_tap "$logs/citus-faults.log")
    [ "$f" -eq 0 ] || { grep -E "^(not ok|#)" "$logs/citus-faults.log" | tail -20; tail -30 "$logs/citus-faults.log"; }
    grep -E "^(# soak|tests:)" "$logs/citus-faults.log" | sed 's/^/citus_faults /'
    record citus_faults "$p" "$f" $((SECONDS - t0))
fi

# The Debian package: built with dpkg-buildpackage, installed with apt-get into
# this root and smoke-tested. Only in a root: it takes the make-installed files
# out first, and never touches the host's PostgreSQL.
if want package && [ "$where" = root ]; then
    echo "== Debian package (dpkg-buildpackage, apt-get install, smoke test in a fresh cluster)"
    t0=$SECONDS
    bash test/package/run.sh "$major" >"$logs/package.log" 2>&1
    echo "exit=$?" >>"$logs/package.log"
    read -r p f < <(count_tap "$logs/package.log")
    [ "$f" -eq 0 ] || tail -30 "$logs/package.log"
    record package "$p" "$f" $((SECONDS - t0))
fi

echo
echo "== summary: PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}') ($where; logs in build/test-logs)"
printf '%s\n' "${summary[@]}"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
