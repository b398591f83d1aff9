#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what is missing, build,
# install, start a throwaway cluster with claimqueue preloaded and put jobs
# through a queue (scripts/demo.sql).
#
#   scripts/demo.sh               the demo, then the cluster goes
#   scripts/demo.sh --dashboard   the demo, then the cluster stays and the web dashboard
#                                 (clients/dashboard) serves it on 127.0.0.1 until Ctrl-C,
#                                 which stops both
set -euo pipefail
cd "$(dirname "$0")/.."

dashboard=0
case "${1:-}" in
    "") ;;
    --dashboard) dashboard=1 ;;
    *) echo "usage: $0 [--dashboard]" >&2; exit 2 ;;
esac

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

bash scripts/deps.sh
make -s -j2
$SUDO make -s install
if [ "$dashboard" = 0 ]; then
    # pg_virtualenv: a new cluster for the command's lifetime (-t: in a temp dir, also as root).
    pg_virtualenv -t -o shared_preload_libraries=claimqueue \
        psql -X -v ON_ERROR_STOP=1 -f scripts/demo.sql
    exit
fi
(cd clients/dashboard && npm run -s build)
# The dashboard runs in the foreground of the cluster's command: Ctrl-C ends it
# (it closes its connections), then pg_virtualenv stops and removes the cluster.
pg_virtualenv -t -o shared_preload_libraries=claimqueue bash -c '
    psql -X -v ON_ERROR_STOP=1 -f scripts/demo.sql
    echo
    echo "The demo cluster stays up; the dashboard connects to it as $PGUSER."
    echo "Ctrl-C stops the dashboard and the cluster."
    node clients/dashboard/dist/cli.js dashboard --port "${DASHBOARD_PORT:-8089}" || true
'
