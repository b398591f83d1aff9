// What a handler can do besides return or throw, and the worker's hooks:
// snooze, retry-in, non-retryable errors, error detail, the per-job timeout,
// middleware, structured logs, an unknown queue at start(), runUntilEmpty.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  Worker, ClaimQueue, enqueue, snooze, JobFailure, NonRetryableError, JobTimeoutError, QueueNotFoundError,
} from '../dist/index.js';
import { freshDatabase, dropDatabase, until, recordEvents, jobRow } from './helpers.mjs';

const db = 'cq_node_handler';
let pool;
let cq;
let queueNumber = 0;

test.before(async () => {
  pool = await freshDatabase(db);
  cq = new ClaimQueue({ pool });
});
test.after(() => dropDatabase(pool, db));

async function newQueue(options = {}) {
  const name = `h${++queueNumber}`;
  await cq.createQueue(name, { backoffBase: 0, backoffCap: 0, maxAttempts: 3, ...options });
  return name;
}

function newWorker(queue, handler, options = {}) {
  return new Worker({ pool, queue, handler, stopSignals: [], logger: null, wait: 60_000, ...options });
}

test('an unknown queue fails start() with the server error, claiming nothing', async () => {
  const worker = newWorker('emials', () => {});
  const seen = recordEvents(worker);
  await assert.rejects(worker.start(), (err) => err instanceof QueueNotFoundError && err.code === 'QC001' &&
    /emials/.test(err.message));
  await assert.rejects(worker.run(), QueueNotFoundError);
  assert.equal(seen.claimed.length, 0);
});

test('a handler snoozes its job: back later, no attempt spent', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const attempts = [];
  const worker = newWorker(queue, (job) => {
    attempts.push(job.attempt);
    if (attempts.length === 1) return job.snooze(0);
    if (attempts.length === 2) return snooze(0);
    return 'finally';
  });
  const seen = recordEvents(worker);
  await worker.runUntilEmpty();
  assert.deepEqual(attempts, [1, 2, 3]);
  assert.equal(seen.snoozed.length, 2);
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'done');
  assert.equal(row.max_attempts, 5, 'two snoozes, two attempts more than the queue\'s 3');
  assert.deepEqual(await cq.jobErrors(id), [], 'a snooze is no failure');
});

test('NonRetryableError fails the job at once, keeping class, message and stack', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, () => { throw new NonRetryableError('bad address'); });
  const seen = recordEvents(worker);
  await worker.runUntilEmpty();
  assert.equal(seen.failed.length, 1);
  assert.equal(seen.failed[0][2], 'failed');
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'failed');
  assert.equal(row.attempt, 1, 'attempts were left, and none was used');
  const [error] = await cq.jobErrors(id);
  assert.equal(error.error, 'bad address');
  assert.equal(error.detail.class, 'NonRetryableError');
  assert.equal(error.detail.message, 'bad address');
  assert.match(error.detail.stack, /handler\.test\.mjs/);
});

test('each failed attempt is kept in the history; JobFailure retryIn sets the delay', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, {});
  const worker = newWorker(queue, (job) => {
    if (job.attempt === 1) throw new TypeError('first');
    throw new JobFailure('later', { retryIn: 3_600_000 });
  });
  await worker.runUntilEmpty();
  const row = await jobRow(pool, id);
  assert.equal(row.state, 'ready');
  const { rows } = await pool.sql.query(
    "SELECT run_at > now() + interval '50 minutes' AS later FROM queue_jobs WHERE id = $1", [id]);
  assert.equal(rows[0].later, true);
  const errors = await cq.jobErrors(id);
  assert.deepEqual(errors.map((e) => [e.attempt, e.error, e.detail.class]), [[1, 'first', 'TypeError'], [2, 'later', 'JobFailure']]);
});

test('a handler that ignores its timeout is left behind: job failed, slot freed', async () => {
  const queue = await newQueue({ maxAttempts: 1 });
  const stuck = await enqueue(pool, queue, { stuck: true });
  let stuckSignal;
  const worker = newWorker(queue, (job) => {
    if (job.payload.stuck) {
      stuckSignal = job.signal;
      return new Promise(() => {});            // ignores its signal, never settles
    }
    return 'ok';
  }, { concurrency: 1, timeout: 200, timeoutGrace: 100 });
  const seen = recordEvents(worker);
  await worker.start();
  await until(() => seen.failed.length === 1, 'the stuck job failed by its timeout');
  assert.ok(stuckSignal.aborted);
  assert.ok(stuckSignal.reason instanceof JobTimeoutError);
  assert.ok(seen.failed[0][1] instanceof JobTimeoutError);
  // The only slot is free again: the next job runs while the stuck handler hangs on.
  const next = await enqueue(pool, queue, {});
  await until(async () => (await jobRow(pool, next)).state === 'done', 'the next job runs in the freed slot');
  await worker.stop();
  assert.equal((await jobRow(pool, stuck)).state, 'failed');
  const [error] = await cq.jobErrors(stuck);
  assert.equal(error.detail.class, 'JobTimeoutError');
});

test('a handler that stops at its timeout signal fails with its own error; handBack snoozes', async () => {
  const queue = await newQueue();
  const polite = await enqueue(pool, queue, { polite: true });
  let handedBack = 0;
  const worker = newWorker(queue, (job) => new Promise((resolve, reject) => {
    if (job.payload.polite && job.attempt === 1) job.signal.addEventListener('abort', () => reject(job.signal.reason));
    else if (job.payload.polite) resolve('second time');
    else if (handedBack++ === 0) { /* ignores its signal the first time */ } else resolve('done');
  }), { timeout: 100, timeoutGrace: 100, onTimeout: 'handBack' });
  const seen = recordEvents(worker);
  const rude = await enqueue(pool, queue, { rude: true });
  await worker.runUntilEmpty();
  assert.equal((await jobRow(pool, polite)).state, 'done');
  assert.equal((await cq.jobErrors(polite))[0].detail.class, 'JobTimeoutError');
  const rudeRow = await jobRow(pool, rude);
  assert.equal(rudeRow.state, 'done');
  assert.equal(rudeRow.max_attempts, 4, 'handed back with snooze: no attempt spent');
  assert.equal(seen.handedBack.length, 1);
});

test('middleware wraps the handler in order; the logger gets structured fields', async () => {
  const queue = await newQueue();
  const id = await enqueue(pool, queue, { n: 1 });
  const order = [];
  const lines = [];
  const logger = {
    debug: (message, fields) => lines.push(['debug', message, fields]),
    info: (message, fields) => lines.push(['info', message, fields]),
    warn: (message, fields) => lines.push(['warn', message, fields]),
    error: (message, fields) => lines.push(['error', message, fields]),
  };
  const worker = newWorker(queue, (job) => { order.push(`handler ${job.payload.n}`); return { n: job.payload.n }; }, {
    logger,
    middleware: [
      async (job, next) => { order.push('outer in'); const value = await next(); order.push('outer out'); return value; },
      async (job, next) => { order.push('inner in'); const value = await next(); order.push('inner out'); return { ...value, wrapped: true }; },
    ],
  });
  await worker.runUntilEmpty();
  assert.deepEqual(order, ['outer in', 'inner in', 'handler 1', 'inner out', 'outer out']);
  assert.deepEqual(await cq.result(id), { n: 1, wrapped: true });
  const done = lines.find(([level, , fields]) => level === 'debug' && fields?.outcome === 'done');
  assert.ok(done, 'a done job is logged at debug');
  assert.equal(done[2].jobId, id);
  assert.equal(done[2].queue, queue);
  assert.equal(done[2].attempt, 1);
  assert.equal(typeof done[2].durationMs, 'number');
});

test('a WorkerGroup serves several queues over one pool, each with its handler and concurrency', async () => {
  const { WorkerGroup } = await import('../dist/index.js');
  const mail = await newQueue();
  const sms = await newQueue();
  await cq.enqueueBatch(mail, Array.from({ length: 6 }, (_, n) => ({ payload: { n } })));
  await cq.enqueueBatch(sms, Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));
  const seen = { [mail]: [], [sms]: [] };
  const group = new WorkerGroup({
    pool, stopSignals: [],
    queues: {
      [mail]: { concurrency: 3, logger: null, handler: (job) => { seen[mail].push(job.payload.n); } },
      [sms]: { concurrency: 1, logger: null, handler: (job) => { seen[sms].push(job.payload.n); } },
    },
  });
  assert.equal(group.workers[mail].concurrency, 3);
  assert.equal(group.workers[sms].concurrency, 1);
  await group.runUntilEmpty();
  assert.deepEqual([...seen[mail]].sort(), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(seen[sms], [0, 1, 2, 3]);
  const broken = new WorkerGroup({ pool, stopSignals: [], queues: {
    [mail]: { logger: null, handler: () => {} }, nope: { logger: null, handler: () => {} } } });
  await assert.rejects(broken.start(), QueueNotFoundError);
});
