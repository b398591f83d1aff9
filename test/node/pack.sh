#!/usr/bin/env bash
# The Node package as npm publishes it: `npm pack` in clients/node, the
# tarball's contents and package.json checked, then installed into a fresh
# project outside the tree (a temporary directory) with pg from npm's cache,
# and a worker from that install drains a queue of a database of its own.
# PG* variables from pg_virtualenv. TAP-style checks; ends "N passed, M failed".
#
#   bash test/node/pack.sh --warm-cache   with the network, before the tests:
#       install pg@8 into a throwaway project, so that npm's cache holds what
#       the offline install below resolves (npm ci caches tarballs only, and
#       npm 12 then finds no metadata for "pg@8" offline)
set -uo pipefail
if [ "${1:-}" = --warm-cache ]; then
    warm=$(mktemp -d)
    (cd "$warm" && npm init -y >/dev/null 2>&1 && npm install --no-audit --no-fund --silent pg@8 >/dev/null)
    status=$?
    rm -rf "$warm"
    exit $status
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deadline=120
. "$root/test/lib/tap.sh"
db=claimqueue_pack
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "pack test: npm not installed"; exit 1; }
[ -d "$root/clients/node/node_modules" ] || (cd "$root/clients/node" && npm ci --no-audit --no-fund --silent >/dev/null)
tarball=$(cd "$root/clients/node" && npm pack --silent --pack-destination "$tmp" 2>/dev/null | tail -1)
check "npm pack made a tarball ($tarball)" test -f "$tmp/$tarball"
tar -tzf "$tmp/$tarball" >"$tmp/contents"
for f in package/package.json package/README.md package/LICENSE package/CHANGELOG.md \
         package/dist/index.js package/dist/index.d.ts package/dist/admin.d.ts; do
    check "the tarball holds ${f#package/}" grep -qx "$f" "$tmp/contents"
done
check "the tarball holds no sources or tests" [ -z "$(grep -E '^package/(src|test)/' "$tmp/contents")" ]
tar -xzf "$tmp/$tarball" -C "$tmp" package/package.json
check "package.json: version 1.0.0, exports with types, repository" node -e '
  const p = require(process.argv[1]);
  process.exit(p.version === "1.0.0" && p.exports["."].types === "./dist/index.d.ts" &&
               p.exports["."].default === "./dist/index.js" && p.repository && p.repository.url ? 0 : 1);
' "$tmp/package/package.json"

mkdir "$tmp/app"
cd "$tmp/app"
npm init -y >/dev/null 2>&1
# pg comes from npm's cache (the tests run without a network); the package from the tarball.
install_app() { npm install --offline --no-audit --no-fund --silent "$tmp/$tarball" pg@8 >"$tmp/install.log" 2>&1; }
check "the tarball installs into a fresh project" install_app
[ -d node_modules/claimqueue ] || cat "$tmp/install.log"

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<'SQL'
SET client_min_messages = error;
CREATE SCHEMA app_queue;
CREATE EXTENSION claimqueue SCHEMA app_queue;
SQL
cat >worker.mjs <<'JS'
import pg from 'pg';
import { ClaimQueue, Worker } from 'claimqueue';
const pool = new pg.Pool({ max: 4 });
const cq = new ClaimQueue({ pool });
await cq.createQueue('packed');
await cq.enqueueBatch('packed', Array.from({ length: 50 }, (_, n) => ({ payload: { n } })));
let handled = 0;
await new Worker({ pool, queue: 'packed', concurrency: 2, stopSignals: [], logger: null,
                   handler: (job) => { handled++; return { twice: job.payload.n * 2 }; } }).runUntilEmpty();
const [stats] = (await cq.queueStats()).filter((s) => s.queue === 'packed');
console.log(`handled=${handled} done=${stats.done}`);
await pool.end();
JS
out=$(PGDATABASE=$db timeout 120 node worker.mjs 2>&1)
echo "# $out"
check "a worker from the installed package drains 50 jobs" [ "$out" = "handled=50 done=50" ]
cat >types.ts <<'TS'
import { Worker, ClaimQueue, type Job } from 'claimqueue';
declare const pool: import('claimqueue').PoolLike;
interface Mail { to: string }
const w = new Worker<Mail>({ pool, queue: 'q', handler: (job: Job<Mail>) => job.payload.to.length });
const cq: ClaimQueue = new ClaimQueue({ pool });
void w; void cq;
TS
tsc=$root/clients/node/node_modules/.bin/tsc
check "the installed types compile (tsc --strict)" \
    "$tsc" --strict --noEmit --module nodenext --moduleResolution nodenext --types node \
    --typeRoots "$root/clients/node/node_modules/@types" types.ts
psql -X -q -d postgres -c "DROP DATABASE $db WITH (FORCE)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
