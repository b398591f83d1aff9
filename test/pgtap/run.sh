#!/usr/bin/env bash
# Runs the pgTAP suite (test/pgtap/*.sql) against a running cluster.
#
# Connection: the usual PG* variables (PGHOST, PGPORT, PGUSER, PGPASSWORD),
# as pg_virtualenv sets them; the user must be a superuser (CREATE EXTENSION
# claimqueue requires one). A fresh database is created for the run and
# dropped afterwards.
#
#   cd /path/to/claimqueue
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/pgtap/run.sh
#
# Environment:
#   CLAIMQUEUE_TAP_DB   database to create and drop (default claimqueue_tap)
#   CLAIMQUEUE_ADMIN_DB database to connect to for CREATE/DROP DATABASE (default postgres)
#   PG_PROVE_OPTS       extra pg_prove options, e.g. "--verbose"
# Exits non-zero when any test fails or the setup does.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo_root"

db=${CLAIMQUEUE_TAP_DB:-claimqueue_tap}
admin_db=${CLAIMQUEUE_ADMIN_DB:-postgres}
read -r -a prove_opts <<<"${PG_PROVE_OPTS:-}"

for tool in psql pg_prove; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not found in PATH" >&2; exit 2; }
done

shopt -s nullglob
tests=(test/pgtap/*.sql)
shopt -u nullglob
if [ "${#tests[@]}" -eq 0 ]; then
    echo "run.sh: no test files in test/pgtap/" >&2
    exit 2
fi

admin() {
    psql -X -q -v ON_ERROR_STOP=1 -d "$admin_db" "$@"
}

drop_db() {
    # FORCE: a test that died mid-way must not keep the database alive.
    admin -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"
}

cleanup() {
    local status=$?
    trap - EXIT
    drop_db || echo "run.sh: could not drop database $db" >&2
    exit "$status"
}

drop_db
admin -c "CREATE DATABASE \"$db\""
trap cleanup EXIT

psql -X -q -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
CREATE EXTENSION pgtap;
CREATE EXTENSION claimqueue;
SQL

echo "pgTAP: running ${#tests[@]} file(s) in database $db as $(psql -X -At -d "$db" -c 'SELECT current_user')"
# No exec: the EXIT trap drops the database and keeps pg_prove's status.
pg_prove "${prove_opts[@]}" -d "$db" "${tests[@]}"
