#!/bin/sh
# Builds claimqueue's SQL scripts from src/sql on stdout (src/sql/README.md).
# The Makefile runs it with VERSION read from claimqueue.control:
#   build.sh install VERSION        the install script: tables.sql, api/, install_end.sql
#   build.sh upgrade FROM VERSION   the upgrade script from release FROM straight to
#                                   VERSION: the update parts of updates/ from FROM on,
#                                   in version order, then api/
#   build.sh releases VERSION       the releases that get an upgrade script: the first
#                                   version of each update part
# Every command first checks that the update parts chain up to VERSION and
# that api/ holds exactly the files listed below.
set -eu
cd "$(dirname "$0")"

# The SQL API, in this order in every script: a file may use what an earlier
# one made (the views call access.sql's visible_queues(); roles.sql grants on
# everything).
api="queues jobs access views reaper locks waiting cursors metrics schedules citus roles"

die() { echo "src/sql/build.sh: $*" >&2; exit 1; }
usage() { die "usage: build.sh install VERSION | upgrade FROM VERSION | releases VERSION"; }

command=${1:-}
case $command in
install|releases) [ $# -eq 2 ] || usage; version=$2 ;;
upgrade)          [ $# -eq 3 ] || usage; start=$2; version=$3 ;;
*)                usage ;;
esac

for f in api/*.sql; do
    name=$(basename "$f" .sql)
    case " $api " in *" $name "*) ;; *) die "$f is not in build.sh's list of api files" ;; esac
done
for name in $api; do
    [ -f "api/$name.sql" ] || die "api/$name.sql is missing"
done

# The update parts, FROM--TO.sql, one "FROM TO" line each, sorted by FROM;
# each must start where the one before ended, and the last must end at VERSION.
chain=$(for f in updates/*--*.sql; do
            [ -e "$f" ] || continue
            f=${f#updates/}
            f=${f%.sql}
            echo "${f%%--*} ${f#*--}"
        done | sort -V -k1,1)
[ -n "$chain" ] || die "updates/ holds no update part"
last=""
while read -r from to; do
    [ -z "$last" ] || [ "$from" = "$last" ] ||
        die "updates/: no part starts at $last (the next one is $from--$to.sql)"
    last=$to
done <<CHAIN
$chain
CHAIN
[ "$last" = "$version" ] ||
    die "updates/ ends at $last, not at $version (claimqueue.control): add updates/$last--$version.sql"

# emit FILE...: each file after a line that names it.
emit() {
    for f in "$@"; do
        printf '\n-- ---- src/sql/%s ----\n\n' "$f"
        cat "$f"
    done
}

api_files=""
for name in $api; do api_files="$api_files api/$name.sql"; done

case $command in
install)
    printf '%s\n' \
        "-- claimqueue $version: queue tables (schema claimqueue) and the SQL API (the extension's schema)." \
        "-- Built by make from src/sql (tables.sql, api/, install_end.sql): edit those, not this file." \
        '\echo Use "CREATE EXTENSION claimqueue" to load this file. \quit'
    # shellcheck disable=SC2086
    emit tables.sql $api_files install_end.sql
    ;;
upgrade)
    parts=$(echo "$chain" | awk -v start="$start" '$1 == start { on = 1 } on { printf "updates/%s--%s.sql ", $1, $2 }')
    [ -n "$parts" ] || die "no update part starts at $start"
    printf '%s\n' \
        "-- claimqueue $start -> $version: the table changes of every release since $start, then the SQL API of $version." \
        "-- Built by make from src/sql (updates/, api/): edit those, not this file." \
        "\\echo Use \"ALTER EXTENSION claimqueue UPDATE TO '$version'\" to load this file. \\quit"
    # shellcheck disable=SC2086
    emit $parts $api_files
    ;;
releases)
    echo "$chain" | awk '{ print $1 }'
    ;;
esac
