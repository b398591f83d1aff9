// The connection: --url, or else the PG* variables (node-postgres reads
// PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE itself).

import { Pool } from 'pg';

export function makePool(url: string | undefined, max = 4): Pool {
  const pool = new Pool({
    connectionString: url || process.env.CLAIMQUEUE_URL || undefined,
    max,
    application_name: 'claimqueue dashboard',
    // A page waits no longer than this for the server.
    statement_timeout: 10_000,
    // Connections stay while pages are watched: a new one costs its backend's start and its
    // catalog caches' warm-up, more than many pages' statements (node-postgres closes an idle
    // connection after 10 s by default, and the live updates come every 5 s).
    idleTimeoutMillis: 300_000,
  } as any);
  // An idle connection's error (a server restart) must not end the process.
  pool.on('error', () => {});
  return pool;
}
