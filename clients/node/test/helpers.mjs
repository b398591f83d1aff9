// Shared by the tests: a database of its own per test file (the extension
// installed, a pool on it) and polling with a deadline instead of sleeps.
// Connection settings come from the PG* variables (pg_virtualenv sets them).
import pg from 'pg';

export async function freshDatabase(name) {
  const admin = new pg.Client({ database: 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ database: name, max: 12 });
  pool.on('error', () => {});   // an idle connection closed by a test
  await pool.query('SET client_min_messages = error; CREATE EXTENSION claimqueue');
  return pool;
}

export async function dropDatabase(pool, name) {
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
  for (const name of ['claimed', 'started', 'done', 'failed', 'lost', 'handedBack', 'heartbeat', 'error',
                      'stopping', 'stopped']) {
    seen[name] = [];
    worker.on(name, (...args) => seen[name].push(args));
  }
  return seen;
}

export async function jobRow(pool, id) {
  const { rows } = await pool.query(
    'SELECT state, attempt, last_error, worker, lease_expires_at FROM queue_jobs WHERE id = $1', [id]);
  return rows[0];
}
