# Sourced by the one-client benches that run in a cluster of their own
# (calls.sh, wal.sh). rerun_in_throwaway_cluster SCRIPT [SETTING...] -- [ARG...]
# runs `bash SCRIPT --inner ARG...` in a throwaway pg_virtualenv cluster with
# each SETTING (name=value) and claimqueue preloaded: the installed build, or
# with EXTENSION_DESTDIR=DIR the one `make install DESTDIR=DIR` put there
# (Debian's extension_destdir), so two builds, an old release's included, can
# be measured side by side. It does not return.
rerun_in_throwaway_cluster() {
    local script=$1 library=claimqueue options=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        options+=(-o "$1")
        shift
    done
    if [ $# -gt 0 ]; then shift; fi
    if [ -n "${EXTENSION_DESTDIR:-}" ]; then
        library=$EXTENSION_DESTDIR$(pg_config --pkglibdir)/claimqueue.so
        options+=(-o "extension_destdir=$EXTENSION_DESTDIR")
    fi
    exec pg_virtualenv -t -o "shared_preload_libraries=$library" "${options[@]}" \
        bash "$script" --inner "$@"
}
