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
  } as any);
  // An idle connection's error (a server restart) must not end the process.
  pool.on('error', () => {});
  return pool;
}
