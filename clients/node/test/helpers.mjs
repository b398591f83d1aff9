// Shared by the tests: a database of its own per test file (the extension
// installed, a pool on it) and polling with a deadline instead of sleeps.
// Connection settings come from the PG* variables (pg_virtualenv sets them).
//
// CLAIMQUEUE_TEST_SCHEMA=cq installs the extension in a schema of its own
// (CREATE EXTENSION claimqueue SCHEMA cq): the library's pool keeps the
// default search_path, so every call it makes must be qualified. The tests'
// own SQL runs on pool.sql, whose search_path has the schema.
import pg from 'pg';

export const schema = process.env.CLAIMQUEUE_TEST_SCHEMA || null;

export async function freshDatabase(name) {
  const admin = new pg.Client({ database: 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ database: name, max: 12 });
  pool.on('error', () => {});   // an idle connection closed by a test
  if (schema) {
    await pool.query(`SET client_min_messages = error; CREATE SCHEMA ${schema}; ` +
      `CREATE EXTENSION claimqueue SCHEMA ${schema}`);
    pool.sql = new pg.Pool({ database: name, max: 4, options: `-c search_path=public,${schema}` });
    pool.sql.on('error', () => {});
  } else {
    await pool.query('SET client_min_messages = error; CREATE EXTENSION claimqueue');
    pool.sql = pool;
  }
  return pool;
}

export async function dropDatabase(pool, name) {
  if (pool.sql !== pool) await pool.sql.end();
  await pool.end();
  const admin = new pg.Client({ database: 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

// Resolves when check() returns a truthy value; rejects after `deadline` ms.
export async function until(check, what, deadline = 20_000) {
  const end = Date.now() + deadline;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Collects a worker's events (name -> array of argument lists).
export function recordEvents(worker) {
  const seen = {};
  for (const name of ['claimed', 'started', 'done', 'failed', 'lost', 'handedBack', 'snoozed', 'heartbeat',
                      'error', 'stopping', 'stopped']) {
    seen[name] = [];
    worker.on(name, (...args) => seen[name].push(args));
  }
  return seen;
}

export async function jobRow(pool, id) {
  const { rows } = await pool.sql.query(
    'SELECT state, attempt, max_attempts, last_error, worker, lease_expires_at FROM queue_jobs WHERE id = $1', [id]);
  return rows[0];
}
