# Shared by the stress scripts: the checks of their variables, psql helpers,
# and a database made for the run and dropped when the script exits (with a
# sampler it started, and its log). Source it after setting `name` (the
# script's name in messages), `db` and `admin_db`.

# positive_integers VAR...: each named variable holds a positive integer, or
# the script stops with status 2 naming it.
positive_integers() {
    local v
    for v in "$@"; do
        if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
            echo "$name: $v must be a positive integer, not '${!v}'" >&2
            exit 2
        fi
    done
}

admin() { psql -X -q -v ON_ERROR_STOP=1 -d "$admin_db" "$@"; }
sql() { psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
# One value, unaligned, no headers.
val() { psql -X -q -v ON_ERROR_STOP=1 -At -d "$db" -c "$1"; }

drop_db() {
    admin -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"
}

keep_db=${keep_db:-0}   # 1: the database stays after the run
sampler_pid=""   # a background sampler to stop at exit
log=""           # a temporary file to remove at exit
cleanup() {
    local status=$?
    trap - EXIT
    [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
    [ -n "$log" ] && rm -f "$log"
    if [ "$keep_db" = 1 ]; then
        echo "$name: keeping database $db"
    else
        drop_db || echo "$name: could not drop database $db" >&2
    fi
    exit "$status"
}

# fresh_db: the database made anew for this run, cleaned up at exit.
fresh_db() {
    drop_db
    admin -c "CREATE DATABASE \"$db\""
    trap cleanup EXIT
}
