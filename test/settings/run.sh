#!/usr/bin/env bash
# Every claimqueue.* setting the server knows is in README's "Settings" table
# with its default, and every setting the table lists exists: the table is
# the documentation of record, so a setting the code lacks (or one it adds
# without a row) fails here. Run against a server with claimqueue preloaded
# (preload-only settings exist only then):
#
#   pg_virtualenv -t -o shared_preload_libraries=claimqueue bash test/settings/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib/tap.sh

# "name default" for each row of the table under "### Settings", the default
# as SHOW prints it.
readme_settings() {
    awk '/^### Settings$/ { in_section = 1; next }
         in_section && /^### / { exit }
         in_section && /^\| `claimqueue\./ {
             split($0, cell, "|")
             name = cell[2]; value = cell[3]
             gsub(/[` ]/, "", name); gsub(/[` ]/, "", value)
             print name, value
         }' README.md | sort
}
# The same from the server: pg_settings for the names, SHOW (in a session
# that set nothing) for the defaults as the table spells them.
server_settings() {
    psql -X -At -d postgres -c "SELECT name FROM pg_settings WHERE name LIKE 'claimqueue.%' ORDER BY name" |
        while read -r name; do
            echo "$name $(psql -X -At -d postgres -c "SHOW $name")"
        done | sort
}

readme=$(readme_settings)
server=$(server_settings)
echo "# README: $(wc -l <<<"$readme") settings; server: $(wc -l <<<"$server")"
check "the README's Settings table lists settings" [ "$(wc -l <<<"$readme")" -ge 8 ]
missing_in_readme=$(comm -13 <(cut -d' ' -f1 <<<"$readme") <(cut -d' ' -f1 <<<"$server"))
missing_in_server=$(comm -23 <(cut -d' ' -f1 <<<"$readme") <(cut -d' ' -f1 <<<"$server"))
check "every setting the server defines has a row (missing: ${missing_in_readme:-none})" \
    [ -z "$missing_in_readme" ]
check "every row names a setting the server defines (unknown: ${missing_in_server:-none})" \
    [ -z "$missing_in_server" ]
wrong=$(comm -13 <(echo "$readme") <(echo "$server") | tr '\n' ';')
check "every default in the table is the server's (server says: ${wrong:-all match})" \
    [ "$readme" = "$server" ]
# The reserved prefix: a setting claimqueue does not define is refused.
check "the claimqueue. prefix is reserved" \
    bash -c "psql -X -At -d postgres -c \"SET claimqueue.no_such_setting = 1\" 2>&1 | grep -q 'invalid configuration parameter name'"

echo "settings: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
