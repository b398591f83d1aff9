#!/usr/bin/env bash
# The PGXN release: `make dist` makes claimqueue-VERSION.zip from the committed
# tree; the zip must carry a META.json that agrees with the control file, and
# `pgxn install ./claimqueue-VERSION.zip` (pgxnclient, as a user runs it) must
# build it from the unpacked zip and install every file the extension needs.
# The install goes into a DESTDIR, never into the live PostgreSQL. Prints
# TAP-style "ok"/"not ok" lines. Needs git, unzip, python3, pgxnclient and a
# PostgreSQL with its server headers (PG_CONFIG, default pg_config).
#
#   bash test/pgxn/run.sh
#   bash test/pgxn/run.sh --can-run   exits 0 if this tree can make the zip, else
#                                     says why (stderr) and exits 1
# Outside a git checkout of claimqueue (a tree unpacked from a release, a copy
# without .git) there is no committed tree to pack: it says so and skips.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)

# Why `make dist` cannot run here (git archive of HEAD), or nothing.
why_not() {
    command -v git >/dev/null || { echo "git is not installed"; return; }
    local top
    top=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "not a git checkout: make dist packs the committed tree with git archive"; return; }
    [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ] || { echo "not a git checkout of claimqueue: the enclosing one is $top"; return; }
    git rev-parse --verify -q HEAD >/dev/null || echo "the checkout has no commit to pack"
}
reason=$(why_not)
if [ "${1:-}" = --can-run ]; then
    [ -z "$reason" ] && exit 0
    echo "$reason" >&2
    exit 1
fi
if [ -n "$reason" ]; then
    echo "1..0 # SKIP $reason"
    exit 0
fi
. test/lib/tap.sh
pg_config=${PG_CONFIG:-pg_config}
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
zip=claimqueue-$version.zip

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s dist >"$work/dist.log" 2>&1
rc=$?
[ $rc -eq 0 ] || cat "$work/dist.log"
check "make dist makes $zip" test $rc -eq 0 -a -f "$zip"
[ -f "$zip" ] || { echo "# no zip: stopping"; exit 1; }
mv "$zip" "$work/"
echo "# $zip: $(stat -c %s "$work/$zip") bytes"

unzip -Z1 "$work/$zip" >"$work/files"
check "every file is under claimqueue-$version/" bash -c "! grep -v '^claimqueue-$version/' '$work/files'"
check "the zip holds every tracked file but bench/ and .ci/" \
    diff <(git ls-tree -r --name-only HEAD | grep -v -e '^bench/' -e '^\.ci/' | sed "s|^|claimqueue-$version/|" | sort) \
         <(grep -v '/$' "$work/files" | sort)

unzip -q "$work/$zip" -d "$work/unpacked"
top="$work/unpacked/claimqueue-$version"
# meta FIELD...: a value of the zip's META.json (a JSON path of keys).
meta() { python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: v = v[k]
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$top/META.json" "$@"; }
check "META.json is valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$top/META.json"
check "META.json's version is the control file's ($version)" test "$(meta version)" = "$version"
check "META.json provides claimqueue $version" test "$(meta provides claimqueue version)" = "$version"
check "the file it names is in the zip" test -f "$top/$(meta provides claimqueue file)"
check "META.json has a release_status PGXN knows" \
    bash -c "case '$(meta release_status)' in stable|testing|unstable) ;; *) exit 1 ;; esac"
check "META.json names a maintainer and a license" test -n "$(meta maintainer)" -a -n "$(meta license)"
check "META.json requires a PostgreSQL version at run time" test -n "$(meta prereqs runtime requires PostgreSQL)"
check "META.json follows meta-spec 1.0.0" test "$(meta meta-spec version)" = 1.0.0

# pgxn install unpacks the zip in a directory of its own, runs make and make
# install there; DESTDIR (from the environment) keeps the install out of the
# live PostgreSQL.
dest="$work/dest"
live_before=$(stat -c '%Y %s' "$("$pg_config" --pkglibdir)/claimqueue.so" 2>/dev/null || echo none)
(cd "$work" && DESTDIR="$dest" pgxn install --yes --nosudo --make make --pg_config "$(command -v "$pg_config")" "./$zip") \
    >"$work/install.log" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -30 "$work/install.log"
check "pgxn install ./$zip builds and installs it (into a DESTDIR)" test $rc -eq 0
libdir="$dest$("$pg_config" --pkglibdir)"
extdir="$dest$("$pg_config" --sharedir)/extension"
check "the library is installed" test -f "$libdir/claimqueue.so"
check "the control file is installed" cmp -s "$extdir/claimqueue.control" claimqueue.control
# What the checkout's own make install puts there (into another DESTDIR) is the
# reference: the same files, the SQL scripts byte for byte.
ref="$work/ref"
make -s install DESTDIR="$ref" PG_CONFIG="$pg_config" >"$work/ref.log" 2>&1 || tail -20 "$work/ref.log"
(cd "$ref" && find . -type f | sort) >"$work/ref.files"
(cd "$dest" && find . -type f | sort) >"$work/dest.files"
check "pgxn install installed the files make install does" diff "$work/ref.files" "$work/dest.files"
differ=""
for f in $(grep -v '\.so$' "$work/ref.files"); do
    cmp -s "$ref/$f" "$dest/$f" || differ="$differ $f"
done
[ -z "$differ" ] || echo "# different:$differ"
check "the SQL scripts, control file and docs are the same as make install's" test -z "$differ"
live_after=$(stat -c '%Y %s' "$("$pg_config" --pkglibdir)/claimqueue.so" 2>/dev/null || echo none)
check "the live PostgreSQL's claimqueue.so was not touched" test "$live_after" = "$live_before"

echo "pgxn: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
