// ClaimQueue, the whole SQL API from Node, and the extension look-up (schema
// and version) against a real server.
import test from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  ClaimQueue, enqueueMany, checkVersion, extensionOf, ExtensionMissingError, UnsupportedVersionError,
  QueueNotFoundError, JobStateConflictError, ScheduleNotFoundError, SUPPORTED_EXTENSION,
} from '../dist/index.js';
import { freshDatabase, dropDatabase, schema } from './helpers.mjs';

const db = 'cq_node_admin';
let pool;
let cq;

test.before(async () => {
  pool = await freshDatabase(db);
  cq = new ClaimQueue({ pool });
});
test.after(() => dropDatabase(pool, db));

test('connect finds the schema and the version, and checks it', async () => {
  const info = await cq.connect();
  assert.equal(info.schema, schema ?? 'public');
  assert.match(info.version, /^0\.5\./);
  assert.equal(SUPPORTED_EXTENSION.min, '0.5.0');
  assert.doesNotThrow(() => checkVersion('0.5.0'));
  assert.doesNotThrow(() => checkVersion('0.5.9'));
  assert.throws(() => checkVersion('0.4.0'), (err) => err instanceof UnsupportedVersionError &&
    /0\.4\.0 is not supported/.test(err.message) && /ALTER EXTENSION/.test(err.hint));
  assert.throws(() => checkVersion('0.6.0'), UnsupportedVersionError);
  assert.throws(() => checkVersion('1.0.0'), UnsupportedVersionError);
});

test('a database without the extension gets a clear error', async () => {
  const bare = new pg.Pool({ database: 'postgres', max: 1 });
  try {
    await assert.rejects(extensionOf(bare), (err) => err instanceof ExtensionMissingError &&
      /not installed/.test(err.message) && /CREATE EXTENSION/.test(err.hint));
    await assert.rejects(new ClaimQueue({ pool: bare }).enqueue('default', {}), ExtensionMissingError);
  } finally {
    await bare.end();
  }
});

test('a ClaimQueue made from a connection string owns and ends its pool', async () => {
  const own = new ClaimQueue({ connectionString: `postgresql:///${db}` });
  assert.ok((await own.queues()).some((q) => q.queue === 'default'));
  await own.end();
  assert.throws(() => new ClaimQueue({}), TypeError);
});

test('queues: create, alter, pause, resume, drop', async () => {
  assert.equal(await cq.createQueue('admin_q', { lease: 60_000, maxAttempts: 3, backoffBase: '2 seconds', maxRunning: 4 }), true);
  assert.equal(await cq.createQueue('admin_q', { ifNotExists: true }), false);
  await assert.rejects(cq.createQueue('admin_q'), (err) => err.code === '42710');
  await cq.alterQueue('admin_q', { maxAttempts: 7, fair: true, retention: '1 day' });
  const settings = (await cq.queues()).find((q) => q.queue === 'admin_q');
  assert.equal(settings.maxAttempts, 7);
  assert.equal(settings.maxRunning, 4);
  assert.equal(settings.fair, true);
  assert.equal(await cq.pauseQueue('admin_q'), true);
  assert.equal(await cq.pauseQueue('admin_q'), false);
  assert.equal((await cq.queueStats()).find((s) => s.queue === 'admin_q').paused, true);
  assert.equal(await cq.resumeQueue('admin_q'), true);
  await cq.enqueue('admin_q', { n: 1 });
  await assert.rejects(cq.dropQueue('admin_q'), (err) => err.code === '55006');
  assert.equal(await cq.dropQueue('admin_q', { force: true }), 1);
  await assert.rejects(cq.alterQueue('admin_q', { maxAttempts: 2 }), QueueNotFoundError);
});

test('enqueueBatch takes options per job, dedup keys included', async () => {
  await cq.createQueue('batch_q');
  const later = new Date(Date.now() + 3_600_000);
  const ids = await cq.enqueueBatch('batch_q', [
    { payload: { n: 1 }, priority: 5, dedupKey: 'k1' },
    { payload: { n: 2 }, runAt: later, maxAttempts: 9, concurrencyKey: 'tenant-a' },
    { payload: { n: 3 }, dedupKey: 'k1' },
  ]);
  assert.equal(ids.length, 3);
  assert.equal(ids[2], ids[0], 'a live dedup key gives the first job back');
  const first = await cq.job(ids[0]);
  assert.equal(first.priority, 5);
  assert.equal(first.dedupKey, 'k1');
  assert.deepEqual(first.payload, { n: 1 });
  const second = await cq.job(ids[1]);
  assert.equal(second.maxAttempts, 9);
  assert.equal(second.concurrencyKey, 'tenant-a');
  assert.equal(second.runAt.getTime(), later.getTime());
  // All or none: a bad job refuses the whole call.
  await assert.rejects(cq.enqueueBatch('batch_q', [{ payload: {} }, { payload: {}, priority: 500 }]),
    (err) => err.code === '22003');
  assert.equal((await cq.queueStats()).find((s) => s.queue === 'batch_q').ready, 1);
  // The plain form: payloads and one set of options.
  const plain = await cq.enqueueBatch('batch_q', [{ a: 1 }, { a: 2 }], { priority: 3 });
  assert.equal((await cq.job(plain[1])).priority, 3);
  assert.deepEqual(await enqueueMany(pool, 'batch_q', []), []);
});

test('schedules: create, list, remove', async () => {
  await cq.createQueue('sched_q');
  const next = await cq.schedule('nightly', '0 3 * * *', 'sched_q', { payload: { report: true }, timezone: 'Europe/Paris' });
  assert.ok(next instanceof Date && next.getTime() > Date.now());
  const [s] = (await cq.schedules()).filter((x) => x.name === 'nightly');
  assert.equal(s.queue, 'sched_q');
  assert.equal(s.timezone, 'Europe/Paris');
  assert.deepEqual(s.payload, { report: true });
  assert.equal(s.paused, false);
  assert.equal(await cq.pauseSchedule('nightly'), true);
  assert.equal(await cq.pauseSchedule('nightly'), false);
  const [p] = (await cq.schedules()).filter((x) => x.name === 'nightly');
  assert.equal(p.paused, true);
  assert.equal(p.nextRunAt, null);
  assert.equal(await cq.resumeSchedule('nightly'), true);
  assert.equal(await cq.resumeSchedule('nightly'), false);
  const [r] = (await cq.schedules()).filter((x) => x.name === 'nightly');
  assert.equal(r.paused, false);
  assert.ok(r.nextRunAt.getTime() >= next.getTime()); // the first slot after the resume
  await assert.rejects(cq.pauseSchedule('no-such'),
    (err) => err instanceof ScheduleNotFoundError && err.code === 'QC006' && /"no-such"/.test(err.message));
  await assert.rejects(cq.resumeSchedule('no-such'), (err) => err.code === 'QC006');
  await cq.unschedule('nightly');
  assert.equal((await cq.schedules()).filter((x) => x.name === 'nightly').length, 0);
  await assert.rejects(cq.unschedule('nightly'), (err) => err.code === 'QC006');
});

test('retry and cancel, one job and in bulk; dead letters page by keyset', async () => {
  await cq.createQueue('dead_q', { maxAttempts: 1 });
  const ids = await cq.enqueueBatch('dead_q', Array.from({ length: 5 }, (_, n) => ({ payload: { n } })));
  for (let i = 0; i < 5; i++) {
    const { rows } = await pool.sql.query("SELECT id, attempt FROM dequeue('dead_q', 'w')");
    await pool.sql.query('SELECT fail($1, $2, $3)', [rows[0].id, rows[0].attempt, `boom ${rows[0].id}`]);
  }
  const first = await cq.deadLetters('dead_q', { limit: 2 });
  assert.equal(first.jobs.length, 2);
  assert.ok(first.next);
  const second = await cq.deadLetters('dead_q', { limit: 2, after: first.next });
  const third = await cq.deadLetters('dead_q', { limit: 2, after: second.next });
  const seen = [...first.jobs, ...second.jobs, ...third.jobs].map((j) => j.id);
  assert.deepEqual([...seen].sort((a, b) => a - b), ids, 'every dead letter once, across pages');
  assert.equal(third.jobs.length, 1);
  assert.equal(third.next, null);
  assert.match(first.jobs[0].lastError, /^boom /);

  await cq.retry(ids[0]);
  assert.equal((await cq.job(ids[0])).state, 'ready');
  await assert.rejects(cq.retry(ids[0]), JobStateConflictError);
  await cq.cancel(ids[0]);
  assert.equal((await cq.job(ids[0])).state, 'cancelled');
  assert.equal(await cq.retryJobs('dead_q', { maxJobs: 2 }), 2);
  assert.equal(await cq.retryJobs('dead_q', { states: ['failed', 'cancelled'] }), 3);
  assert.equal(await cq.cancelJobs('dead_q'), 5);
  assert.equal((await cq.deadLetters('dead_q', { state: 'cancelled' })).jobs.length, 5);
});

test('status, result, errors, await and metrics', async () => {
  await cq.createQueue('status_q', { maxAttempts: 3 });
  const id = await cq.enqueue('status_q', { n: 1 });
  let { rows } = await pool.sql.query("SELECT id, attempt FROM dequeue('status_q', 'w')");
  await pool.sql.query(`SELECT fail($1, $2, 'first', '0', error_detail => '{"class": "Error"}')`, [id, rows[0].attempt]);
  ({ rows } = await pool.sql.query("SELECT id, attempt FROM dequeue('status_q', 'w')"));
  await pool.sql.query(`SELECT complete($1, $2, '{"ok": true}')`, [id, rows[0].attempt]);
  assert.deepEqual(await cq.result(id), { ok: true });
  const [status] = await cq.jobStatus([id]);
  assert.equal(status.state, 'done');
  assert.equal(status.attempt, 2);
  const errors = await cq.jobErrors(id);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].attempt, 1);
  assert.equal(errors[0].error, 'first');
  assert.deepEqual(errors[0].detail, { class: 'Error' });
  assert.ok(errors[0].failedAt instanceof Date);
  const [awaited] = await cq.awaitJobs([id], { timeout: 0 });
  assert.equal(awaited.state, 'done');
  const stats = (await cq.queueStats()).find((s) => s.queue === 'status_q');
  assert.equal(stats.done, 1);
  assert.equal(stats.ready, 0);
  const metrics = (await cq.queueMetrics()).find((m) => m.queue === 'status_q');
  assert.equal(typeof metrics.enqueued, 'number');
});
