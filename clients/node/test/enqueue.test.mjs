// enqueue() and enqueueBatch() against a real server, in the caller's transaction.
import test from 'node:test';
import assert from 'node:assert/strict';
import { enqueue, enqueueBatch, QueueNotFoundError } from '../dist/index.js';
import { freshDatabase, dropDatabase } from './helpers.mjs';

const db = 'cq_node_enqueue';
let pool;
test.before(async () => {
  pool = await freshDatabase(db);
  await pool.sql.query("SELECT create_queue('mail', max_attempts => 3)");
});
test.after(() => dropDatabase(pool, db));

test('enqueue returns the id of a ready job carrying the payload', async () => {
  const id = await enqueue(pool, 'mail', { to: 'a@example.com', n: [1, 2] });
  assert.equal(typeof id, 'number');
  const { rows } = await pool.sql.query('SELECT state, payload, priority, max_attempts FROM queue_jobs WHERE id = $1', [id]);
  assert.deepEqual(rows[0], { state: 'ready', payload: { to: 'a@example.com', n: [1, 2] }, priority: 0, max_attempts: 3 });
});

test('options reach the server: priority, runAt, maxAttempts, dedupKey', async () => {
  const later = new Date(Date.now() + 3_600_000);
  const id = await enqueue(pool, 'mail', {}, { priority: 7, runAt: later, maxAttempts: 9, dedupKey: 'k1' });
  const { rows } = await pool.sql.query('SELECT priority, max_attempts, dedup_key, run_at FROM queue_jobs WHERE id = $1', [id]);
  assert.equal(rows[0].priority, 7);
  assert.equal(rows[0].max_attempts, 9);
  assert.equal(rows[0].dedup_key, 'k1');
  assert.equal(rows[0].run_at.getTime(), later.getTime());
  assert.equal(await enqueue(pool, 'mail', { other: true }, { dedupKey: 'k1' }), id, 'a live key returns the same job');
});

test("a job enqueued in the caller's transaction vanishes with its rollback", async () => {
  const client = await pool.connect();
  let id;
  try {
    await client.query('BEGIN');
    id = await enqueue(client, 'mail', { inside: 'tx' });
    await client.query('ROLLBACK');
  } finally {
    client.release();
  }
  const { rows } = await pool.sql.query('SELECT count(*)::int AS n FROM queue_jobs WHERE id = $1', [id]);
  assert.equal(rows[0].n, 0);
});

test('enqueueBatch returns ids in payload order', async () => {
  const ids = await enqueueBatch(pool, 'mail', [{ n: 1 }, { n: 2 }, { n: 3 }], { priority: -1 });
  assert.equal(ids.length, 3);
  const { rows } = await pool.sql.query(
    'SELECT id, payload->>\'n\' AS n, priority FROM queue_jobs WHERE id = ANY($1) ORDER BY id', [ids]);
  assert.deepEqual(rows.map((r) => [Number(r.id), r.n, r.priority]), ids.map((id, i) => [id, String(i + 1), -1]));
});

test('an unknown queue raises QueueNotFoundError (QC001)', async () => {
  await assert.rejects(enqueue(pool, 'nope', {}), (err) => err instanceof QueueNotFoundError && err.code === 'QC001');
});

test('a payload that is a JSON array stays an array', async () => {
  const id = await enqueue(pool, 'mail', [1, 'two']);
  const { rows } = await pool.sql.query('SELECT payload FROM queue_jobs WHERE id = $1', [id]);
  assert.deepEqual(rows[0].payload, [1, 'two']);
});

test('concurrencyKey reaches the server, for one job and for a whole batch', async () => {
  const one = await enqueue(pool, 'mail', {}, { concurrencyKey: 'tenant-7' });
  const batch = await enqueueBatch(pool, 'mail', [{}, {}], { concurrencyKey: 'tenant-8' });
  const plain = await enqueue(pool, 'mail', {});
  const ids = [one, ...batch, plain];
  const { rows } = await pool.sql.query('SELECT id, concurrency_key FROM queue_jobs WHERE id = ANY($1)', [ids]);
  const keys = new Map(rows.map((r) => [Number(r.id), r.concurrency_key]));
  assert.deepEqual(ids.map((id) => keys.get(id)), ['tenant-7', 'tenant-8', 'tenant-8', null]);
});
