# Released versions for the upgrade checks (sourced by test/upgrade/run.sh and
# test/perl/reaper.pl). `make install` installs only the current version's
# install script and the upgrade scripts; CREATE EXTENSION claimqueue VERSION
# '0.1.0' needs 0.1.0's full script, which test/upgrade/released/ keeps.
#
# released_extension_dir: makes a directory (printed; the caller removes it)
# laid out as Debian's extension_destdir reads it (the share and lib paths of
# pg_config below it), holding the installed claimqueue (control file, the
# current install script, the upgrade scripts to it, and a link to the library
# the server loads) and the released full scripts. A session started with
# PGOPTIONS="-c extension_destdir=<that directory>" (superuser) then finds
# every version. Needs the running server (PG* variables): when the server has
# an extension_destdir of its own, claimqueue is taken from there if installed
# there. The link, not a copy, keeps one library per backend: the server knows
# the file it loaded by its inode, whatever the path.
released_extension_dir() {
    local dir here share lib destdir from_share from_lib current
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    share=$(pg_config --sharedir)/extension
    lib=$(pg_config --pkglibdir)
    # (current_setting(..., true): 18 has no extension_destdir.)
    destdir=$(psql -X -A -t -q -d postgres -c "SELECT current_setting('extension_destdir', true)")
    from_share=$share
    from_lib=$lib
    if [ -n "$destdir" ] && [ -f "$destdir$share/claimqueue.control" ]; then from_share=$destdir$share; fi
    if [ -n "$destdir" ] && [ -f "$destdir$lib/claimqueue.so" ]; then from_lib=$destdir$lib; fi
    current=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$from_share/claimqueue.control")
    [ -n "$current" ] || { echo "released_extension_dir: no claimqueue.control in $from_share" >&2; return 1; }
    dir=$(mktemp -d)
    mkdir -p "$dir$share" "$dir$lib"
    cp "$from_share/claimqueue.control" "$from_share/claimqueue--$current.sql" \
        "$from_share"/claimqueue--*--"$current".sql "$here"/test/upgrade/released/claimqueue--*.sql "$dir$share/"
    ln -s "$from_lib/claimqueue.so" "$dir$lib/claimqueue.so"
    chmod -R a+rX "$dir"
    # The server must read it (it runs as another user): if it could not, it
    # would quietly take its own directory and library instead.
    psql -X -q -d postgres -c "SELECT pg_stat_file('$dir$share/claimqueue.control'), pg_stat_file('$dir$lib/claimqueue.so')" \
        >/dev/null || { echo "released_extension_dir: the server cannot read $dir" >&2; rm -rf "$dir"; return 1; }
    echo "$dir"
}

# released_options DIR: the session options (for PGOPTIONS) that make the
# server find extensions in DIR before its own: Debian's extension_destdir up
# to 17; from 18 the upstream extension_control_path (Debian dropped its
# patch), whose entries are share directories, "$system" the server's own.
released_options() {
    if [ "$(psql -X -A -t -q -d postgres -c "SHOW server_version_num")" -ge 180000 ]; then
        echo "-c extension_control_path=$1$(pg_config --sharedir):\$system"
    else
        echo "-c extension_destdir=$1"
    fi
}

# released_versions: the versions test/upgrade/released/ holds, one a line.
released_versions() {
    local here f
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for f in "$here"/test/upgrade/released/claimqueue--*.sql; do
        f=${f##*/claimqueue--}
        echo "${f%.sql}"
    done | sort -V
}
