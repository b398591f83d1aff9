#!/usr/bin/env bash
# Upgrade test: for every released version (test/upgrade/released/), installs
# it, runs ALTER EXTENSION claimqueue UPDATE with the installed upgrade script,
# and compares the result (test/upgrade/describe.sql: every member object,
# definition, privilege, comment, constraint, trigger, config-dump mark and
# the default queue) with a fresh CREATE EXTENSION of the current version.
# Rows written by the old version go through the update's data migrations:
# their result is checked too. Needs a running cluster (PG* variables) and a
# superuser; creates and drops databases claimqueue_up_*.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/lib/released.sh

current=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
work=$(mktemp -d)
ext=""
trap 'rm -rf "$work" $ext; for d in claimqueue_up_fresh claimqueue_up_old; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done' EXIT

# The released scripts are history: refuse to test with one that changed.
(cd test/upgrade/released && sha256sum --quiet -c SHA256SUMS) ||
    { echo "FAIL: test/upgrade/released/ differs from its SHA256SUMS (never edit those scripts)"; exit 1; }
# Every release with an upgrade script is tested, and every tested release has one.
releases=$(sh src/sql/build.sh releases "$current")
if [ "$releases" != "$(released_versions)" ]; then
    echo "FAIL: the releases with an upgrade script (src/sql/updates) are $(tr '\n' ' ' <<<"$releases")," \
         "but test/upgrade/released/ holds $(released_versions | tr '\n' ' ')"
    exit 1
fi

ext=$(released_extension_dir)
PGOPTIONS=$(released_options "$ext")
export PGOPTIONS

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -d postgres -c "DROP DATABASE IF EXISTS claimqueue_up_fresh" -c "CREATE DATABASE claimqueue_up_fresh"
q -d claimqueue_up_fresh -c "SET client_min_messages = error" -c "CREATE EXTENSION claimqueue"
q -d claimqueue_up_fresh -f test/upgrade/describe.sql >"$work/fresh.txt"

# older OLD THAN: whether release OLD comes before release THAN.
older() { [ "$1" != "$2" ] && [ "$(printf '%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]; }

# Rows as a released version stores them (written by hand: its API is refused
# by this library until the update): a second queue, two ready jobs due (the
# later-enqueued one due first), one scheduled, one running. Since 0.3.0 the
# due ones hold claim positions.
seed="
INSERT INTO claimqueue.queues (queue_id, name) VALUES (2, 'older');
INSERT INTO claimqueue.jobs (id, queue_id, state, attempt, max_attempts, run_at, created_at,
                             started_at, lease_expires_at, worker, payload)
VALUES (1, 2, 'ready',   0, 5, now() - interval '1 minute', now(), NULL, NULL, NULL, '{\"n\": 1}'),
       (2, 2, 'ready',   0, 5, now() - interval '2 minutes', now(), NULL, NULL, NULL, '{\"n\": 2}'),
       (3, 2, 'ready',   0, 5, now() + interval '1 hour', now(), NULL, NULL, NULL, '{\"n\": 3}'),
       (4, 2, 'running', 1, 5, now(), now(), now(), now() + interval '1 hour', 'w', '{\"n\": 4}');"
seed_positions="UPDATE claimqueue.jobs SET pos = 3 - id WHERE id IN (1, 2);"
migrated="
SELECT 'grant ' || q.name || ' ' || g.privilege || ' ' || g.grantee::text
FROM claimqueue.queue_grants g JOIN claimqueue.queues q USING (queue_id)
UNION ALL
SELECT 'job ' || id || ' ' || state || ' pos ' || coalesce(pos::text, 'null') FROM claimqueue.jobs;"
# expected_migration OLD: what the update makes of the seeded rows. Up to 0.1.0
# every queue was open to whoever could call the API: the update grants its
# queues to PUBLIC (grantee 0, shown as -). Before 0.3.0 jobs had no claim
# position: the update numbers the ready and due ones by run_at, then id.
expected_migration() {
    if [ "$1" = 0.1.0 ]; then
        for queue in default older; do
            for privilege in consume manage produce; do echo "grant $queue $privilege -"; done
        done
    fi
    printf '%s\n' "job 1 ready pos 2" "job 2 ready pos 1" "job 3 ready pos null" "job 4 running pos null"
}

failed=0
checked=0
for old in $(released_versions); do
    q -d postgres -c "DROP DATABASE IF EXISTS claimqueue_up_old" -c "CREATE DATABASE claimqueue_up_old"
    q -d claimqueue_up_old -c "SET client_min_messages = error" \
        -c "CREATE EXTENSION claimqueue VERSION '$old'"
    q -d claimqueue_up_old -c "$seed"
    older "$old" 0.3.0 || q -d claimqueue_up_old -c "$seed_positions"
    q -d claimqueue_up_old -c "ALTER EXTENSION claimqueue UPDATE"
    q -d claimqueue_up_old -c "$migrated" -A -t | LC_ALL=C sort >"$work/migrated.txt"
    q -d claimqueue_up_old -c "DELETE FROM claimqueue.jobs" -c "DELETE FROM claimqueue.queues WHERE name = 'older'"
    q -d claimqueue_up_old -f test/upgrade/describe.sql >"$work/updated.txt"
    checked=$((checked + 1))
    if diff -u "$work/fresh.txt" "$work/updated.txt" >"$work/diff.txt"; then
        echo "ok: $old -> $current matches a fresh install ($(grep -c '^member ' "$work/fresh.txt") member objects)"
    else
        echo "FAIL: $old -> $current differs from a fresh install (- fresh, + updated):"
        cat "$work/diff.txt"
        failed=$((failed + 1))
    fi
    if diff -u <(expected_migration "$old") "$work/migrated.txt" >"$work/diff.txt"; then
        echo "ok: $old -> $current migrates the rows of $old ($(wc -l <"$work/migrated.txt") checked)"
    else
        echo "FAIL: $old -> $current migrates the rows of $old wrongly (- expected, + found):"
        cat "$work/diff.txt"
        failed=$((failed + 1))
    fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no released version in test/upgrade/released"; exit 1; }
echo "upgrade: $checked versions checked, $failed failed"
[ "$failed" -eq 0 ]
