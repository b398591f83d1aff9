#!/usr/bin/env bash
# Installs what claimqueue needs to build and test, if missing, for one
# PostgreSQL major (PG_MAJOR, default 15: Debian 12's) from the system's Debian
# archive: Debian 12 on the host, or the root scripts/chroot.sh made for that
# major. postgresql-server-dev-N must match the server's minor version, so the
# two are always installed (or upgraded) together. libipc-run-perl: the Perl TAP
# suites (PostgreSQL::Test::Cluster, shipped with postgresql-server-dev-N) need
# IPC::Run. prometheus-postgres-exporter and curl: test/prometheus scrapes the
# exporter with contrib/prometheus/queries.yaml. python3-psycopg-pool: the Python
# client's workers take a pool; python3-build, -venv, -setuptools, -wheel and mypy: its
# wheel is built, installed into a fresh venv and type-checked. chromium (for 15): the
# dashboard's browser tests (playwright-core drives it; nothing downloads a browser). The client libraries' npm
# packages come from their committed lock files (npm ci). DEPS=server: only
# what builds and runs the extension (the package test needs no more).
set -euo pipefail
cd "$(dirname "$0")/.."
pg=${PG_MAJOR:-15}

packages=(
    "postgresql-$pg" "postgresql-server-dev-$pg" postgresql-common "postgresql-client-$pg"
    build-essential g++ make ca-certificates
)
[ "${DEPS:-all}" = server ] || packages+=(
    "postgresql-$pg-pgtap" libtap-parser-sourcehandler-pgtap-perl cmake libgtest-dev
    libipc-run-perl
    python3-psycopg python3-psycopg-pool python3-pytest
    python3-build python3-venv python3-setuptools python3-wheel mypy
    git unzip python3 pgxnclient
    prometheus-postgres-exporter curl
)
# The browser suite runs against Debian 12's PostgreSQL only (scripts/test.sh).
[ "${DEPS:-all}" = server ] || [ "$pg" != 15 ] || packages+=(chromium fonts-dejavu-core)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The node-postgres worker test needs node and npm (the machine's own, or Debian's).
if [ "${DEPS:-all}" != server ]; then
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
# A server older than its dev headers (or the reverse) breaks the build: upgrade both.
server=$(dpkg-query -W -f='${Version}' "postgresql-$pg" 2>/dev/null || true)
headers=$(dpkg-query -W -f='${Version}' "postgresql-server-dev-$pg" 2>/dev/null || true)
if [ -n "$server" ] && [ -n "$headers" ] && [ "$server" != "$headers" ]; then
    missing+=("postgresql-$pg" "postgresql-server-dev-$pg")
fi

# clients/node (its install builds dist/) and the fault test that uses it:
# npm ci again only when a lock file changed since the last install.
npm_packages() {
    [ "${DEPS:-all}" != server ] || return 0
    local dir
    for dir in clients/node test/clients clients/dashboard; do
        if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
           [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
            echo "deps: npm ci in $dir"
            # Not fatal: without them only the suites that use them fail.
            (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent >/dev/null) ||
                echo "deps: npm ci in $dir failed"
        fi
    done
}

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all packages present"
    npm_packages
    exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" "${missing[@]}" >/dev/null
echo "deps: done ($("/usr/lib/postgresql/$pg/bin/pg_config" --version))"
npm_packages
