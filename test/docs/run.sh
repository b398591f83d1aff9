#!/usr/bin/env bash
# The documents test (suite "documents" of scripts/test.sh), against the
# cluster the PG* variables name (pg_virtualenv's, claimqueue preloaded):
#  - every relative link and #anchor in the Markdown documents resolves to a
#    file and a heading that exist (test/docs/check.py links);
#  - every function, procedure and view that CREATE EXTENSION claimqueue
#    installs has an entry in docs/sql-api.md, and every entry names one
#    (check.py api);
#  - the README's Node and Python workers, extracted as they are written, run:
#    each drains its queue, storing its result, and stops on SIGTERM with
#    exit status 0.
# Prints "ok"/"not ok" lines; exits 1 when one failed. Waits poll with a
# deadline (DOCS_DEADLINE seconds, default 60).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deadline=${DOCS_DEADLINE:-60}
db=claimqueue_docs
python=/usr/bin/python3
[ -x "$python" ] || python=python3
failed=0
note() { echo "# $*"; }

mkdir -p "$root/build"

# --- links -------------------------------------------------------------------
"$python" "$here/check.py" links "$root" || failed=1

# --- the API's entries --------------------------------------------------------
psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || exit 1
export PGDATABASE=$db
psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION claimqueue" || exit 1
# Functions, procedures and views that belong to the extension: those of its
# schema by name, the others (schema claimqueue) qualified.
psql -X -At -v ON_ERROR_STOP=1 >"$root/build/docs-installed.txt" <<'SQL' || exit 1
WITH ext AS (SELECT oid, extnamespace FROM pg_catalog.pg_extension WHERE extname = 'claimqueue'),
members AS (
    SELECT p.pronamespace AS nsp, p.proname AS name
    FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_proc p ON p.oid = d.objid, ext
    WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.refclassid = 'pg_catalog.pg_extension'::regclass
      AND d.refobjid = ext.oid AND d.deptype = 'e'
    UNION
    SELECT c.relnamespace, c.relname
    FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class c ON c.oid = d.objid, ext
    WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refclassid = 'pg_catalog.pg_extension'::regclass
      AND d.refobjid = ext.oid AND d.deptype = 'e' AND c.relkind = 'v')
SELECT CASE WHEN m.nsp = ext.extnamespace THEN m.name ELSE n.nspname || '.' || m.name END
FROM members m JOIN pg_catalog.pg_namespace n ON n.oid = m.nsp, ext
ORDER BY 1;
SQL
"$python" "$here/check.py" api "$root" <"$root/build/docs-installed.txt" || failed=1

# --- the README's workers -----------------------------------------------------
work=$(mktemp -d "$root/build/docs-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_example KIND CMD...: a fresh queue 'emails' with three jobs, then the
# README's worker (which enqueues one more); once every job is done with the
# handler's result, SIGTERM, and the worker must exit 0 having announced
# each job once.
run_example() {
    local kind=$1 out=$work/$1.out pid status=0 done_jobs=0 end
    shift
    psql -X -q -At -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || return 1
SELECT drop_queue(name, force => true) FROM queue_settings s(name) WHERE name = 'emails';
SELECT create_queue('emails');
SELECT enqueue('emails', jsonb_build_object('to', 'user' || g || '@example.com')) FROM generate_series(1, 3) g;
SQL
    "$@" >"$out" 2>&1 &
    pid=$!
    end=$((SECONDS + deadline))
    while [ "$SECONDS" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
        done_jobs=$(psql -X -At -c "SELECT count(*) FROM queue_jobs WHERE queue = 'emails' AND state = 'done' AND result = '{\"sent\": true}'")
        [ "$done_jobs" -ge 4 ] && break
        sleep 0.2
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" || status=$?
    local lines others
    # Counted as matches, not lines: the handlers run concurrently, and two
    # threads' print() calls may share a line (each writes its text and its
    # newline separately).
    lines=$(grep -o 'sending to [[:alnum:]._-]*@example\.com' "$out" | wc -l)
    others=$(psql -X -At -c "SELECT count(*) FROM queue_jobs WHERE queue = 'emails' AND state <> 'done'")
    if [ "$done_jobs" -ge 4 ] && [ "$others" -eq 0 ] && [ "$lines" -eq 4 ] && [ "$status" -eq 0 ]; then
        echo "ok - the README's $kind worker ran: 4 jobs done with their result, exit 0 after SIGTERM"
    else
        echo "not ok - the README's $kind worker: $done_jobs jobs done with the result, $others not done, $lines jobs announced, exit status $status"
        sed 's/^/#   /' "$out" | tail -20
        return 1
    fi
}

# Node: the README's file beside a node_modules that holds the libraries it
# imports, clients/node (built) and the pg it is built against.
if "$python" "$here/check.py" example "$root" node >"$work/worker.mjs"; then
    if [ ! -f "$root/clients/node/dist/index.js" ] || [ ! -d "$root/clients/node/node_modules/pg" ]; then
        (cd "$root/clients/node" && npm ci --no-audit --no-fund --silent >/dev/null 2>&1)
    fi
    mkdir -p "$work/node_modules"
    ln -s "$root/clients/node" "$work/node_modules/claimqueue"
    ln -s "$root/clients/node/node_modules/pg" "$work/node_modules/pg"
    run_example node node "$work/worker.mjs" || failed=1
else
    echo "not ok - the README's node worker: not found"
    failed=1
fi

# Python: the README's file with clients/python on the path.
if "$python" "$here/check.py" example "$root" python >"$work/worker.py"; then
    run_example python env PYTHONPATH="$root/clients/python" "$python" "$work/worker.py" || failed=1
else
    echo "not ok - the README's python worker: not found"
    failed=1
fi

psql -X -q -d postgres -c "DROP DATABASE $db" >/dev/null 2>&1
exit $failed
