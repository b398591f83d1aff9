// The Worker against a real server: claims, completion, failure, QC003,
// heartbeats, stop() and its grace, hand-back. Waits poll with deadlines.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Worker, enqueue, enqueueBatch, StaleClaimError } from '../dist/index.js';
import { freshDatabase, dropDatabase, until, recordEvents, jobRow } from './helpers.mjs';

const db = 'cq_node_worker';
let pool;
let queueNumber = 0;

test.before(async () => { pool = await freshDatabase(db); });
test.after(() => dropDatabase(pool, db));

// A queue of its own per test, so tests never see each other's jobs.
async function newQueue(settings = "lease => '30 seconds'") {
  const name = `q${++queueNumber}`;
  await pool.sql.query(`SELECT create_queue('${name}', ${settings}, backoff_base => '0', backoff_cap => '0')`);
  return name;
}

function newWorker(queue, handler, options = {}) {
  return new Worker({ pool, queue, handler, stopSignals: [], logger: null, wait: 60_000, ...options });
}

test('constructor refuses bad options', () => {
  assert.throws(() => newWorker('q', () => {}, { concurrency: 0 }), RangeError);
  assert.throws(() => newWorker('q', () => {}, { concurrency: 1.5 }), RangeError);
  assert.throws(() => newWorker('q', () => {}, { lease: 0 }), RangeError);
  assert.throws(() => newWorker('q', () => {}, { grace: -1 }), RangeError);
  assert.throws(() => newWorker('q', 'not a function'), TypeError);
});

test('every job is handled once and completed; events tell it', async () => {
  const queue = await newQueue();
  const ids = await enqueueBatch(pool, queue, Array.from({ length: 25 }, (_, n) => ({ n })));
  const handled = [];
  const worker = newWorker(queue, async (job) => { handled.push(job.payload.n); }, { concurrency: 3 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 25, '25 jobs done');
  await worker.stop();
  assert.deepEqual(handled.sort((a, b) => a - b), Array.from({ length: 25 }, (_, n) => n));
  const { rows } = await pool.sql.query(
    "SELECT count(*)::int AS n FROM queue_jobs WHERE id = ANY($1) AND state = 'done' AND attempt = 1", [ids]);
  assert.equal(rows[0].n, 25);
  assert.equal(seen.error.length, 0);
  assert.equal(seen.claimed.flat().reduce((sum, jobs) => sum + jobs.length, 0), 25);
  assert.equal(seen.stopped.length, 1);
});

test('a throwing event listener breaks neither the job nor the worker', async () => {
  const queue = await newQueue();
  const ids = await enqueueBatch(pool, queue, [{}, {}]);
  const worker = newWorker(queue, async () => {});
  const seen = recordEvents(worker);
  worker.on('started', () => { throw new Error('listener bug'); });
  worker.on('done', () => { throw new Error('listener bug'); });
  worker.start();
  await until(() => seen.done.length === 2, 'both jobs done');
  await worker.stop();
  const { rows } = await pool.sql.query("SELECT count(*)::int AS n FROM queue_jobs WHERE id = ANY($1) AND state = 'done'", [ids]);
  assert.equal(rows[0].n, 2);
  assert.equal(seen.failed.length, 0);
});

test('up to `concurrency` handlers run at once, never more', async () => {
  const queue = await newQueue();
  await enqueueBatch(pool, queue, Array.from({ length: 9 }, (_, n) => ({ n })));
  let running = 0;
  let most = 0;
  let releaseAll;
  const allThreeRunning = new Promise((resolve) => { releaseAll = resolve; });
  const worker = newWorker(queue, async () => {
    running++;
    most = Math.max(most, running);
    if (running === 3) releaseAll();
    await allThreeRunning;          // the first three wait until three run at once
    running--;
  }, { concurrency: 3 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 9, '9 jobs done');
  await worker.stop();
  assert.equal(most, 3);
  assert.ok(seen.claimed.every(([jobs]) => jobs.length <= 3), 'no claim is larger than the free slots');
});

test('a throwing handler fails the attempt with its message; the retry completes it', async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 2");
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, async (job) => {
    if (job.attempt === 1) throw new Error('smtp timeout');
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 1, 'the retry done');
  await worker.stop();
  assert.equal(seen.failed.length, 1);
  const [job, error, outcome] = seen.failed[0];
  assert.equal(job.id, id);
  assert.equal(error.message, 'smtp timeout');
  assert.equal(outcome, 'ready');
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'done');
  assert.equal(row.attempt, 2);
  assert.equal(row.last_error, 'smtp timeout');
});

test("the last attempt's throw leaves the job failed", async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 1");
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, async () => { throw new Error('bad payload'); });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.failed.length === 1, 'the failure recorded');
  await worker.stop();
  assert.equal(seen.failed[0][2], 'failed');
  assert.equal((await jobRow(pool, id)).state, 'failed');
});

test('completeInTransaction commits the effects with the completion', async () => {
  const queue = await newQueue();
  await pool.sql.query('CREATE TABLE effects_ok (job_id bigint, attempt int)');
  const ids = await enqueueBatch(pool, queue, [{}, {}, {}]);
  const worker = newWorker(queue, async (job) => {
    const value = await job.completeInTransaction(async (client) => {
      await client.query('INSERT INTO effects_ok VALUES ($1, $2)', [job.id, job.attempt]);
      return 'result';
    });
    assert.equal(value, 'result');
  }, { concurrency: 2 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 3, '3 jobs done');
  await worker.stop();
  const { rows } = await pool.sql.query(
    `SELECT count(*)::int AS n FROM effects_ok e JOIN queue_jobs j ON j.id = e.job_id
     WHERE j.state = 'done' AND j.attempt = e.attempt AND j.id = ANY($1)`, [ids]);
  assert.equal(rows[0].n, 3);
  assert.equal(seen.error.length, 0);
});

test('a throw inside completeInTransaction rolls the effects back and fails the attempt', async () => {
  const queue = await newQueue("lease => '30 seconds', max_attempts => 1");
  await pool.sql.query('CREATE TABLE effects_rolled_back (job_id bigint)');
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, async (job) => {
    await job.completeInTransaction(async (client) => {
      await client.query('INSERT INTO effects_rolled_back VALUES ($1)', [job.id]);
      throw new Error('half way');
    });
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.failed.length === 1, 'the failure recorded');
  await worker.stop();
  assert.equal((await pool.sql.query('SELECT count(*)::int AS n FROM effects_rolled_back')).rows[0].n, 0);
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'failed');
  assert.equal(row.last_error, 'half way');
});

test('QC003 (the job was cancelled under the handler) is a lost attempt: effects rolled back, no fail, no error', async () => {
  const queue = await newQueue();
  await pool.sql.query('CREATE TABLE effects_lost (job_id bigint)');
  const id = await enqueue(pool, queue, {});
  let cancelled;
  const cancelDone = new Promise((resolve) => { cancelled = resolve; });
  let thrown;
  const worker = newWorker(queue, async (job) => {
    await cancelDone;
    try {
      await job.completeInTransaction((client) => client.query('INSERT INTO effects_lost VALUES ($1)', [job.id]));
    } catch (err) {
      thrown = err;
      throw err;
    }
  });
  const seen = recordEvents(worker);
  worker.on('started', async (job) => {
    await pool.sql.query('SELECT cancel($1)', [job.id]);
    cancelled();
  });
  worker.start();
  await until(() => seen.lost.length === 1, 'the lost attempt reported');
  await worker.stop();
  assert.ok(thrown instanceof StaleClaimError);
  assert.equal(thrown.code, 'QC003');
  assert.ok(seen.lost[0][0].signal.aborted, "the attempt's signal is aborted");
  assert.equal(seen.failed.length, 0);
  assert.equal(seen.error.length, 0);
  assert.equal(seen.done.length, 0);
  assert.equal((await pool.sql.query('SELECT count(*)::int AS n FROM effects_lost')).rows[0].n, 0);
  assert.equal((await jobRow(pool, id)).state, 'cancelled');
});

test('a stale claim found by a heartbeat aborts the signal and is reported once as lost', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, async (job) => {
    await pool.sql.query('SELECT cancel($1)', [job.id]);
    await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
  }, { lease: 300 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.lost.length === 1 && seen.done.length + seen.failed.length === 0 && worker.running === 0,
    'the heartbeat found the claim stale');
  await worker.stop();
  assert.equal(seen.lost.length, 1);
  assert.equal(seen.error.length, 0);
  assert.equal((await jobRow(pool, id)).state, 'cancelled');
});

test("heartbeats keep a job past its lease (the queue's lease when none is given)", async () => {
  const queue = await newQueue("lease => '600 milliseconds'");
  const id = await enqueue(pool, queue, {});
  let firstExpiry;
  const worker = newWorker(queue, async (job) => {
    firstExpiry = job.leaseExpiresAt;
    await until(() => seen.heartbeat.length >= 4, 'four heartbeats');
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.done.length === 1, 'the job done');
  await worker.stop();
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'done');
  assert.equal(row.attempt, 1, 'never reaped');
  assert.ok(seen.heartbeat.at(-1)[1] > firstExpiry, 'the lease moved forward');
});

test('stop() interrupts a sleeping dequeue_wait and leaves no waiter', async () => {
  const queue = await newQueue();
  const worker = newWorker(queue, async () => {}, { wait: 600_000 });
  worker.start();
  const waiting = () => pool.sql.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN claimqueue.waiters() w USING (pid)
     WHERE w.queue = $1`, [queue]).then((r) => r.rows[0].n);
  await until(async () => (await waiting()) === 1, 'the worker sleeps in dequeue_wait');
  let stopped = false;
  const stopping = worker.stop().then(() => { stopped = true; });
  await until(() => stopped, 'stop() resolves long before the 10-minute wait ends');
  await stopping;
  assert.equal(await waiting(), 0);
  const { rows } = await pool.sql.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'CALL dequeue_wait%' AND state = 'active'");
  assert.equal(rows[0].n, 0);
});

test("a role's statement_timeout does not cut the wait short", async () => {
  const queue = await newQueue();
  const shortTimeouts = new pg.Pool({ database: db, max: 4, statement_timeout: 200 });
  shortTimeouts.on('error', () => {});
  const worker = new Worker({ pool: shortTimeouts, queue, handler: async () => {}, stopSignals: [], logger: null,
    wait: 10_000 });
  const seen = recordEvents(worker);
  worker.start();
  // With the timeout in force the CALL would end at 200 ms and every wait would be young.
  await until(async () => (await pool.sql.query(
    "SELECT count(*)::int AS n FROM claimqueue.waiters() WHERE queue = $1 AND now() - since > interval '600 ms'",
    [queue])).rows[0].n === 1, 'a wait older than the statement timeout');
  await enqueue(pool, queue, {});
  await until(() => seen.done.length === 1, 'the job done');
  await worker.stop();
  await shortTimeouts.end();
  assert.equal(seen.error.length, 0);
});

test('a terminated waiting connection is reported and replaced', async () => {
  const queue = await newQueue();
  const worker = newWorker(queue, async () => {}, { retryDelay: 50 });
  const seen = recordEvents(worker);
  worker.start();
  const waiterPid = async () => (await pool.sql.query(
    'SELECT pid FROM claimqueue.waiters() WHERE queue = $1', [queue])).rows[0]?.pid;
  const first = await until(waiterPid, 'the worker waits');
  await pool.sql.query('SELECT pg_terminate_backend($1)', [first]);
  await until(async () => { const pid = await waiterPid(); return pid !== undefined && pid !== first; },
    'a new waiting connection');
  await enqueue(pool, queue, {});
  await until(() => seen.done.length === 1, 'the job done through the new connection');
  await worker.stop();
  assert.ok(seen.error.length >= 1, 'the lost connection was reported');
  assert.ok(seen.error.every(([err]) => err.code !== 'QC003'));
});

test('stop() lets running handlers finish within the grace period', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  let finish;
  const worker = newWorker(queue, () => new Promise((resolve) => { finish = resolve; }), { grace: 60_000 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.started.length === 1, 'the handler runs');
  const stopping = worker.stop();
  await until(() => seen.stopping.length === 1, 'stopping');
  finish();
  await stopping;
  assert.equal((await jobRow(pool, id)).state, 'done');
  assert.equal(seen.handedBack.length, 0);
});

test('after the grace period a running job is handed back with snooze, spending no attempt', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  let handlerSignal;
  const worker = newWorker(queue, (job) => {
    handlerSignal = job.signal;
    return new Promise(() => {});        // never finishes by itself
  });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.started.length === 1, 'the handler runs');
  await worker.stop({ grace: 100 });
  assert.equal(seen.handedBack.length, 1);
  assert.equal(seen.handedBack[0][0].id, id);
  assert.ok(handlerSignal.aborted);
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'ready');
  assert.equal(row.last_error, null, 'a hand-back is no failure');
  const { rows } = await pool.sql.query('SELECT run_at <= now() AS due, max_attempts FROM queue_jobs WHERE id = $1', [id]);
  assert.equal(rows[0].due, true, 'claimable again at once');
  assert.equal(rows[0].max_attempts, 6, 'the budget grew by the attempt handed back (the queue gives 5)');
  await assert.rejects(seen.started[0][0].completeInTransaction(async () => {}), StaleClaimError);
});

test("stop() hands back a claim under the worker's name that no handler got", async () => {
  const queue = await newQueue();
  const busy = await enqueue(pool, queue, {});
  let finish;
  const worker = newWorker(queue, () => new Promise((resolve) => { finish = resolve; }), { concurrency: 1 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.started.length === 1, 'the only slot is busy, so the worker claims nothing');
  // What a claim committing just as its CALL is cancelled leaves behind: a job
  // running under this worker's name that no handler of it got.
  const orphan = await enqueue(pool, queue, {});
  const { rows: claimed } = await pool.sql.query('SELECT id FROM dequeue($1, $2)', [queue, worker.name]);
  assert.equal(Number(claimed[0].id), orphan);
  const stopping = worker.stop();
  finish();
  await stopping;
  assert.deepEqual(seen.handedBack.map(([job]) => job.id), [orphan]);
  assert.equal((await jobRow(pool, busy)).state, 'done');
  const row = await jobRow(pool, orphan);
  assert.equal(row.state, 'ready');
  assert.equal(row.last_error, null);
});

test('SIGTERM drains: the running job finishes and the process exits 0', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const child = spawn(process.execPath,
    [fileURLToPath(new URL('./fixtures/sigterm-worker.mjs', import.meta.url)), queue],
    { env: { ...process.env, PGDATABASE: db }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await until(() => output.includes('started'), 'the child runs the job');
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.match(output, /stopping/);
  assert.match(output, /done \d+/);
  assert.equal((await jobRow(pool, id)).state, 'done');
});

test('releaseOnDisconnect reaches the server: the claim records its owner session; by default none', async () => {
  const queue = await newQueue();
  const tied = await enqueue(pool, queue, {});
  const owner = async (id) => (await pool.sql.query(
    'SELECT owner_session FROM claimqueue.jobs WHERE id = $1', [id])).rows[0].owner_session;
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const releasing = newWorker(queue, () => finished, { releaseOnDisconnect: true });
  const seen = recordEvents(releasing);
  releasing.start();
  await until(() => seen.started.length === 1, 'the first job runs');
  assert.equal(seen.started[0][0].id, tied);
  assert.notEqual(await owner(tied), null, 'claimed with release_on_disconnect');
  finish();
  await until(() => seen.done.length === 1, 'the job done');
  await releasing.stop();
  assert.equal(await owner(tied), null, 'complete clears the owner');

  const plain = await enqueue(pool, queue, {});
  const ordinary = newWorker(queue, async () => {
    assert.equal(await owner(plain), null, 'a plain claim has no owner');
  });
  const seenOrdinary = recordEvents(ordinary);
  ordinary.start();
  await until(() => seenOrdinary.done.length + seenOrdinary.failed.length === 1, 'the second job handled');
  await ordinary.stop();
  assert.equal(seenOrdinary.failed.length, 0);
});

test('releaseOnDisconnect: the claiming session outlives stop() until its grace ends', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  let finish;
  const worker = newWorker(queue, () => new Promise((resolve) => { finish = resolve; }),
    { releaseOnDisconnect: true, grace: 120_000, concurrency: 2 });
  const seen = recordEvents(worker);
  worker.start();
  await until(() => seen.started.length === 1, 'the handler runs');
  const waiterPid = async () => (await pool.sql.query(
    'SELECT pid FROM claimqueue.waiters() WHERE queue = $1', [queue])).rows[0]?.pid;
  const pid = await until(waiterPid, 'the worker waits for more');
  const stopping = worker.stop();
  // The waiting CALL is cancelled; its session, which owns the running claim, stays.
  await until(async () => (await waiterPid()) === undefined, 'the wait cancelled');
  const { rows } = await pool.sql.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1", [pid]);
  assert.equal(rows[0].n, 1, 'the claiming session is still open');
  assert.equal(Number((await pool.sql.query('SELECT reap($1) AS n', [queue])).rows[0].n), 0);
  finish();
  await stopping;
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'done');
  assert.equal(row.attempt, 1);
  assert.equal(seen.lost.length + seen.handedBack.length + seen.error.length, 0);
});
