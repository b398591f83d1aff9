#!/usr/bin/env bash
# Installs what claimqueue needs to build and test on Debian 12, if missing.
# postgresql-server-dev-15 must match the server's minor version, so the two are
# always installed (or upgraded) together. libipc-run-perl: the Perl TAP suites
# (PostgreSQL::Test::Cluster, shipped with postgresql-server-dev-15) need IPC::Run.
# The client libraries' npm packages come from their committed lock files (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-client-15
    postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
    libipc-run-perl
    build-essential g++ make cmake libgtest-dev
    python3-psycopg python3-pytest
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The node-postgres worker test needs node and npm (the machine's own, or Debian's).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# A server older than its dev headers (or the reverse) breaks the build: upgrade both.
server=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
headers=$(dpkg-query -W -f='${Version}' postgresql-server-dev-15 2>/dev/null || true)
if [ -n "$server" ] && [ -n "$headers" ] && [ "$server" != "$headers" ]; then
    missing+=(postgresql-15 postgresql-server-dev-15)
fi

# clients/node (its install builds dist/) and the fault test that uses it:
# npm ci again only when a lock file changed since the last install.
npm_packages() {
    local dir
    for dir in clients/node test/clients; do
        if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
           [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
            echo "deps: npm ci in $dir"
            # Not fatal: without them only the suites that use them fail.
            (cd "$dir" && npm ci --no-audit --no-fund --silent >/dev/null) ||
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
echo "deps: done ($(pg_config --version))"
npm_packages
