#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what is missing, build,
# install, start a throwaway cluster with claimqueue preloaded and put jobs
# through a queue (scripts/demo.sql).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

bash scripts/deps.sh
make -s -j2
$SUDO make -s install
# pg_virtualenv: a new cluster for the command's lifetime (-t: in a temp dir, also as root).
pg_virtualenv -t -o shared_preload_libraries=claimqueue \
    psql -X -v ON_ERROR_STOP=1 -f scripts/demo.sql
