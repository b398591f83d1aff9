// The command line against a real server: tables and --json, the actions
// (checked in the database), and the exit codes USAGE documents.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { XSS, connect, dropDatabase, makeDatabase, urlFor } from './fixture.mjs';

const DB = 'cq_dashboard_cli';
const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');
let ids;
let client;

before(async () => {
  ids = await makeDatabase(DB);
  client = await connect(DB);
});
after(async () => {
  await client?.end();
  await dropDatabase(DB);
});

function cq(args, { env = {}, url = urlFor(DB) } = {}) {
  const argv = url ? ['--url', url, ...args] : args;
  const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function stateOf(id) {
  const { rows } = await client.query('SELECT state FROM cq.queue_jobs WHERE id = $1', [id]);
  return rows[0]?.state;
}

test('status: a table for people and --json for scripts', () => {
  const t = cq(['status']);
  assert.equal(t.code, 0, t.err);
  assert.match(t.out, /^queue\s+state\s+ready\s+running/m);
  assert.match(t.out, /^emails\s+active/m);
  const j = cq(['status', '--json']);
  assert.equal(j.code, 0, j.err);
  const v = JSON.parse(j.out);
  assert.deepEqual(v.queues.map((q) => q.queue), ['default', 'emails', 'reports']);
  assert.equal(v.reapers[0].database, DB);
});

test('queues and schedules', () => {
  const q = cq(['queues', '--json']);
  assert.equal(q.code, 0, q.err);
  const reports = JSON.parse(q.out).find((r) => r.queue === 'reports');
  assert.equal(reports.settings.maxAttempts, 3);
  assert.equal(reports.maxRunning, 4);
  const s = cq(['schedules']);
  assert.equal(s.code, 0, s.err);
  assert.match(s.out, /^nightly-report\s+reports\s+0 3 \* \* \*/m);
});

test('jobs --queue Q --state failed lists the failed jobs only, and pages by keyset', () => {
  const r = cq(['jobs', '--queue', 'emails', '--state', 'failed', '--json']);
  assert.equal(r.code, 0, r.err);
  const page = JSON.parse(r.out);
  assert.deepEqual(page.rows.map((j) => j.state), ['failed', 'failed']);
  assert.deepEqual(page.rows.map((j) => j.id).sort(), [ids.failed, ids.failed2].sort());
  const first = JSON.parse(cq(['jobs', '--queue', 'emails', '--limit', '1', '--json']).out);
  assert.equal(first.rows.length, 1);
  const second = JSON.parse(cq(['jobs', '--queue', 'emails', '--limit', '1', '--after', first.next, '--json']).out);
  assert.ok(second.rows[0].id < first.rows[0].id);
  const byKey = JSON.parse(cq(['jobs', '--queue', 'emails', '--key', 'mail-d', '--json']).out);
  assert.deepEqual(byKey.rows.map((j) => j.id), [ids.running]);
  const table = cq(['jobs', '--queue', 'emails', '--state', 'running']);
  assert.match(table.out, new RegExp(`^${ids.running}\\s+emails\\s+running`, 'm'));
});

test('job ID shows payload, result and the error, as text', () => {
  const r = cq(['job', String(ids.failed), '--json']);
  assert.equal(r.code, 0, r.err);
  const job = JSON.parse(r.out);
  assert.equal(job.payload.html, XSS);
  assert.equal(job.errors.at(-1).error, 'SMTP refused ' + XSS);
  const done = JSON.parse(cq(['job', String(ids.done), '--json']).out);
  assert.deepEqual(done.result, { sent: true });
});

test('retry and cancel change the job in the database', async () => {
  assert.equal(await stateOf(ids.failed2), 'failed');
  const r = cq(['retry', String(ids.failed2)]);
  assert.equal(r.code, 0, r.err);
  assert.equal(await stateOf(ids.failed2), 'ready');
  const c = cq(['cancel', String(ids.failed2)]);
  assert.equal(c.code, 0, c.err);
  assert.equal(await stateOf(ids.failed2), 'cancelled');
});

test('pause and resume', async () => {
  const paused = async () => (await client.query("SELECT paused FROM cq.queue_settings WHERE queue = 'reports'")).rows[0].paused;
  assert.equal(cq(['pause', 'reports']).code, 0);
  assert.equal(await paused(), true);
  assert.match(cq(['pause', 'reports']).out, /already paused/);
  assert.equal(cq(['resume', 'reports', '--json']).code, 0);
  assert.equal(await paused(), false);
});

test('pause and resume a schedule', async () => {
  const paused = async () => (await client.query("SELECT paused FROM claimqueue.schedules WHERE name = 'nightly-report'")).rows[0].paused;
  const r = cq(['pause', '--schedule', 'nightly-report']);
  assert.equal(r.code, 0, r.err);
  assert.equal(await paused(), true);
  assert.match(cq(['schedules']).out, /^nightly-report\s.*\spaused$/m);
  assert.match(cq(['pause', '--schedule', 'nightly-report']).out, /already paused/);
  const j = cq(['resume', '--schedule', 'nightly-report', '--json']);
  assert.equal(j.code, 0, j.err);
  assert.deepEqual(JSON.parse(j.out), { schedule: 'nightly-report', changed: true });
  assert.equal(await paused(), false);
  assert.equal(cq(['pause', 'reports', '--schedule', 'nightly-report']).code, 2);
  const missing = cq(['pause', '--schedule', 'no-such-schedule']);
  assert.equal(missing.code, 5, missing.err);
  assert.match(missing.err, /schedule "no-such-schedule" does not exist \(SQLSTATE QC006\)/);
  const denied = cq(['pause', '--schedule', 'leap-digest'], { url: urlFor(DB, 'cq_test_reader', 'secret') });
  assert.equal(denied.code, 4, denied.err);
  assert.equal((await client.query("SELECT paused FROM claimqueue.schedules WHERE name = 'leap-digest'")).rows[0].paused, false);
});

test('bulk retry of a queue\'s dead letters', async () => {
  const r = cq(['retry', '--queue', 'emails', '--state', 'cancelled', '--json']);
  assert.equal(r.code, 0, r.err);
  assert.ok(JSON.parse(r.out).retried >= 1);
  assert.equal(await stateOf(ids.cancelled), 'ready');
});

test('exit codes: usage 2, no connection 3, denied 4, not found 5, wrong state 6', async () => {
  assert.equal(cq(['jobs']).code, 2);
  assert.equal(cq(['frobnicate']).code, 2);
  assert.equal(cq(['jobs', '--queue', 'emails', '--state', 'lost']).code, 2);
  assert.equal(cq(['retry', 'x1']).code, 2);
  assert.equal(cq(['cancel', '--queue', 'emails']).code, 2, 'a bulk cancel needs --all');
  assert.equal(cq(['dashboard', '--host', '0.0.0.0', '--port', '0']).code, 2, 'no public address without credentials');
  assert.equal(cq(['status'], { url: 'postgres://nobody@127.0.0.1:1/none' }).code, 3);
  const reader = urlFor(DB, 'cq_test_reader', 'secret');
  const denied = cq(['pause', 'emails'], { url: reader });
  assert.equal(denied.code, 4, denied.err);
  assert.match(denied.err, /42501/);
  assert.equal(await stateOf(ids.failed), 'failed');
  assert.equal(cq(['retry', String(ids.failed)], { url: reader }).code, 4);
  assert.equal(await stateOf(ids.failed), 'failed');
  assert.equal(cq(['job', '999999']).code, 5);
  assert.equal(cq(['jobs', '--queue', 'nosuch']).code, 5);
  assert.equal(cq(['pause', 'nosuch']).code, 5);
  assert.equal(cq(['jobs', '--queue', 'reports'], { url: reader }).code, 5, 'a queue the reader may not see');
  const wrong = cq(['retry', String(ids.done)]);
  assert.equal(wrong.code, 6, wrong.err);
});

test('the connection from the PG* variables', () => {
  const r = cq(['status', '--json'], { url: null, env: { PGDATABASE: DB } });
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).reapers[0].database, DB);
});
