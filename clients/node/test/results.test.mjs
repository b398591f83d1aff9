// Results against a real server: a handler's return value stored by the Worker,
// jobStatus(), awaitJobs(), and a result that cannot be stored. Waits poll with deadlines.
import test from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Worker, enqueue, enqueueBatch, jobStatus, awaitJobs } from '../dist/index.js';
import { freshDatabase, dropDatabase, until, recordEvents, jobRow } from './helpers.mjs';

const db = 'cq_node_results';
let pool;
let queueNumber = 0;

test.before(async () => { pool = await freshDatabase(db); });
test.after(() => dropDatabase(pool, db));

async function newQueue(settings = "lease => '30 seconds'") {
  const name = `r${++queueNumber}`;
  await pool.sql.query(`SELECT create_queue('${name}', ${settings}, backoff_base => '0', backoff_cap => '0')`);
  return name;
}

function newWorker(queue, handler, options = {}) {
  return new Worker({ pool, queue, handler, stopSignals: [], logger: null, wait: 60_000, ...options });
}

// Sessions sleeping in CALL await_jobs (waiters() lists them with a NULL queue).
async function awaitingSessions() {
  const { rows } = await pool.sql.query('SELECT count(*)::int AS n FROM claimqueue.waiters() WHERE queue IS NULL');
  return rows[0].n;
}

test('jobStatus: one status per id in their order; an unknown id is all nulls after its id', async () => {
  const queue = await newQueue();
  const [a, b] = await enqueueBatch(pool, queue, [{}, {}]);
  const statuses = await jobStatus(pool, [b, 999_999_999, a]);
  assert.deepEqual(statuses, [
    { id: b, state: 'ready', attempt: 0, result: null, lastError: null },
    { id: 999_999_999, state: null, attempt: null, result: null, lastError: null },
    { id: a, state: 'ready', attempt: 0, result: null, lastError: null },
  ]);
  assert.deepEqual(await jobStatus(pool, []), []);
});

test("the Worker stores a handler's return value as the job's result; undefined stores none", async () => {
  const queue = await newQueue();
  const ids = await enqueueBatch(pool, queue, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  const worker = newWorker(queue, async (job) => {
    switch (job.payload.n) {
      case 1: return { doubled: 2, list: [1, 'a', null] };
      case 2: return 'plain string';
      case 3: return undefined;
      default: return 0;
    }
  }, { concurrency: 2 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 4, '4 jobs done');
  await worker.stop();
  const statuses = await jobStatus(pool, ids);
  assert.deepEqual(statuses.map((s) => [s.state, s.attempt, s.result]), [
    ['done', 1, { doubled: 2, list: [1, 'a', null] }],
    ['done', 1, 'plain string'],
    ['done', 1, null],
    ['done', 1, 0],
  ]);
  const { rows } = await pool.sql.query('SELECT result IS NULL AS none FROM claimqueue.jobs WHERE id = $1', [ids[2]]);
  assert.equal(rows[0].none, true, 'undefined: complete(id, attempt), no result');
  assert.equal(seen.error.length, 0);
});

test('awaitJobs returns when the jobs finish, with their states and results', async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 1");
  const ids = await enqueueBatch(pool, queue, [{ n: 1 }, { n: 2 }, { fail: true }]);
  const waiting = awaitJobs(pool, ids, { timeout: 120_000 });
  let settled = false;
  waiting.then(() => { settled = true; }, () => { settled = true; });
  await until(async () => (await awaitingSessions()) === 1, 'awaitJobs sleeps in the server');
  assert.equal(settled, false, 'nothing is finished yet');
  const worker = newWorker(queue, async (job) => {
    if (job.payload.fail) throw new Error('no thumbnail');
    return { n: job.payload.n * 10 };
  });
  worker.start();
  const statuses = await waiting;
  await worker.stop();
  assert.deepEqual(statuses, [
    { id: ids[0], state: 'done', attempt: 1, result: { n: 10 }, lastError: null },
    { id: ids[1], state: 'done', attempt: 1, result: { n: 20 }, lastError: null },
    { id: ids[2], state: 'failed', attempt: 1, result: null, lastError: 'no thumbnail' },
  ]);
  assert.equal(await awaitingSessions(), 0);
});

test('awaitJobs: the timeout ends the wait without an error, unfinished jobs as they are', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  assert.deepEqual(await awaitJobs(pool, [id], { timeout: 0 }),
    [{ id, state: 'ready', attempt: 0, result: null, lastError: null }]);
  assert.deepEqual((await awaitJobs(pool, [id], { timeout: 50 })).map((s) => s.state), ['ready']);
  await assert.rejects(awaitJobs(pool, [id], { timeout: -1 }), RangeError);
});

test('a result JSON cannot represent fails the attempt with a clear error; the worker goes on', async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 1");
  const ids = await enqueueBatch(pool, queue, [{ kind: 'bigint' }, { kind: 'cycle' }, { kind: 'function' }]);
  const worker = newWorker(queue, async (job) => {
    if (job.payload.kind === 'bigint') return 10n;
    if (job.payload.kind === 'cycle') { const o = {}; o.self = o; return o; }
    if (job.payload.kind === 'function') return () => 1;
    return { fine: true };
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.failed.length === 3, 'three failures recorded');
  const later = await enqueue(pool, queue, { kind: 'plain' });
  await until(() => seen.done.length === 1, 'the next job done');
  await worker.stop();
  for (const id of ids) {
    const row = await jobRow(pool, id);
    assert.equal(row.state, 'failed');
    assert.match(row.last_error, new RegExp(`^the result of job ${id} is not JSON-serialisable: `));
  }
  assert.ok(seen.failed.every(([, error, outcome]) => error instanceof TypeError && outcome === 'failed'));
  assert.deepEqual((await jobStatus(pool, [later]))[0].result, { fine: true });
  assert.equal(seen.error.length, 0);
});

test('a result the server refuses (over claimqueue.max_payload_size) fails the attempt', async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 1");
  const id = await enqueue(pool, queue, {});
  const small = new pg.Pool({ database: db, max: 4, options: '-c claimqueue.max_payload_size=100' });
  small.on('error', () => {});
  const worker = new Worker({ pool: small, queue, handler: async () => ({ text: 'x'.repeat(500) }),
    stopSignals: [], logger: null, wait: 60_000 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.failed.length === 1, 'the failure recorded');
  await worker.stop();
  await small.end();
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'failed');
  assert.match(row.last_error, new RegExp(`^the result of job ${id} was refused: `));
  assert.equal(seen.error.length, 0);
});

test('a handler that completed in its transaction keeps no result and raises nothing', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, async (job) => {
    await job.completeInTransaction(async () => {});
    return 10n;                 // not serialisable, but ignored: the job is done already
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 1, 'the job done');
  await worker.stop();
  assert.deepEqual((await jobStatus(pool, [id]))[0], { id, state: 'done', attempt: 1, result: null, lastError: null });
  assert.equal(seen.error.length + seen.failed.length, 0);
});
