// The dashboard in a real browser: Debian's chromium driven by playwright-core
// (executablePath; nothing downloads a browser), against a real cluster with
// jobs in every state. Screenshots of each page go to build/dashboard/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import pg from 'pg';
import { startDashboard } from '../dist/server.js';
import { XSS, connect, dropDatabase, makeDatabase, urlFor } from './fixture.mjs';

const DB = 'cq_dashboard_browser';
const here = path.dirname(fileURLToPath(import.meta.url));
const SHOTS = process.env.DASHBOARD_SCREENSHOTS || path.join(here, '..', '..', '..', 'build', 'dashboard');
const BROWSER = process.env.CHROMIUM || '/usr/bin/chromium';

let ids, client, browser, admin, reader, readOnly, pools = [];

function pool(url) {
  const p = new pg.Pool({ connectionString: url, max: 3 });
  pools.push(p);
  return p;
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ids = await makeDatabase(DB, { history: true });
  client = await connect(DB);
  admin = await startDashboard({ pool: pool(urlFor(DB)), port: 0 });
  reader = await startDashboard({ pool: pool(urlFor(DB, 'cq_test_reader', 'secret')), port: 0 });
  readOnly = await startDashboard({ pool: pool(urlFor(DB)), port: 0, readOnly: true });
  browser = await chromium.launch({ executablePath: BROWSER, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
});

after(async () => {
  await browser?.close();
  for (const d of [admin, reader, readOnly]) await d?.close();
  for (const p of pools) await p.end();
  await client?.end();
  await dropDatabase(DB);
});

/** A fresh page that fails the test on a script error or a CSP violation. */
async function open(dashboard, pathname) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  const response = await page.goto(new URL(pathname, dashboard.url).href);
  return { page, context, response, problems };
}

async function stateOf(id) {
  return (await client.query('SELECT state FROM cq.queue_jobs WHERE id = $1', [id])).rows[0]?.state;
}

const PAGES = [
  ['overview', '/', 'Overview'],
  ['queue', '/queues/emails', 'Queue emails'],
  ['queue-failed', '/queues/emails?state=failed', 'Queue emails'],
  ['job', null, null],
  ['dead-letters', '/dead-letters', 'Dead letters'],
  ['schedules', '/schedules', 'Schedules'],
  ['claims', '/claims', 'Running claims'],
  ['reapers', '/reapers', 'Reapers'],
  ['locks', '/locks', 'Advisory locks'],
];

test('each page renders, with the headers that keep it safe, and no script error', async () => {
  for (const [name, p, title] of PAGES) {
    const pathname = p ?? `/jobs/${ids.failed}`;
    const { page, context, response, problems } = await open(admin, pathname);
    assert.equal(response.status(), 200, pathname);
    const csp = response.headers()['content-security-policy'];
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.equal(await page.locator('h1').innerText(), title ?? `Job ${ids.failed}`);
    if (name === 'overview') {
      await page.waitForSelector('#throughput[data-rendered="chart"]');
      assert.equal(await page.locator('#throughput canvas').count(), 1);
      assert.equal(await page.locator('tr[data-queue]').count(), 3);
    }
    if (name === 'queue-failed') {
      const states = await page.locator('tr[data-job]').evaluateAll((rows) => rows.map((r) => r.dataset.state));
      assert.deepEqual(states, ['failed', 'failed']);
    }
    if (name === 'claims') assert.equal(await page.locator(`tr[data-job="${ids.running}"]`).count(), 1);
    if (name === 'schedules') assert.equal(await page.locator('tr[data-schedule="nightly-report"]').count(), 1);
    if (name === 'reapers') assert.match(await page.locator('table').innerText(), new RegExp(DB));
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    assert.deepEqual(problems, [], `${pathname}: ${problems.join('; ')}`);
    await context.close();
  }
});

test("the reapers page shows another database's reaper, its details to a role with pg_read_all_stats only", async () => {
  const OTHER = 'cq_dashboard_other';
  await dropDatabase(OTHER);
  const setup = await connect('postgres');
  try {
    await setup.query(`CREATE DATABASE ${OTHER}`);
  } finally {
    await setup.end();
  }
  const other = await connect(OTHER);
  try {
    await other.query('CREATE EXTENSION claimqueue');
    // Its reaper starts when CREATE EXTENSION commits and counts a pass soon after.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await client.query(
        'SELECT state, passes FROM cq.all_reaper_stats WHERE database = $1', [OTHER]);
      if (rows[0]?.state === 'running' && Number(rows[0].passes) > 0) break;
      assert.ok(Date.now() < deadline, `the reaper of ${OTHER}: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const cells = async (dashboard) => {
      const { page, context, problems } = await open(dashboard, '/reapers');
      const row = page.locator(`tr[data-database="${OTHER}"] td`);
      const texts = await row.allInnerTexts();
      assert.deepEqual(problems, []);
      if (dashboard === admin) await page.screenshot({ path: path.join(SHOTS, 'reapers-all.png'), fullPage: true });
      await context.close();
      return texts;
    };
    // The superuser (pg_read_all_stats): state, pid, start, passes.
    const full = await cells(admin);
    assert.equal(full[0], OTHER);
    assert.equal(full[1], 'running');
    assert.match(full[2], /^[0-9]+$/);
    assert.notEqual(full[3], '–');
    assert.match(full[5], /^[1-9][0-9,]*$/);
    // A reader of one queue: the state and pid, no start, passes or counters.
    const limited = await cells(reader);
    assert.deepEqual([limited[0], limited[1], limited[2]], [OTHER, 'running', full[2]]);
    assert.deepEqual(limited.slice(3, 8), ['–', '–', '–', '–', '–']);
  } finally {
    await other.end();
    await dropDatabase(OTHER);
  }
});

test('an XSS payload and error show as text', async () => {
  const { page, context } = await open(admin, `/jobs/${ids.failed}`);
  assert.match(await page.locator('pre.payload').innerText(), /<script>window.__xss = 1<\/script>/);
  assert.match(await page.locator('td.err').first().innerText(), /SMTP refused <script>/);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator('main script, main img').count(), 0);
  await context.close();
  const dl = await open(admin, '/dead-letters?queue=emails');
  assert.equal(await dl.page.evaluate(() => window.__xss), undefined);
  assert.ok((await dl.page.locator(`tr[data-job="${ids.failed}"] td.err`).innerText()).includes(XSS));
  await dl.context.close();
});

test('a click on retry moves a failed job to ready in the database', async () => {
  assert.equal(await stateOf(ids.failed2), 'failed');
  const { page, context } = await open(admin, '/dead-letters?queue=emails');
  await Promise.all([page.waitForNavigation(), page.locator(`tr[data-job="${ids.failed2}"] button[data-action="retry"]`).click()]);
  assert.match(await page.locator('.flash').innerText(), new RegExp(`Retried job ${ids.failed2}`));
  assert.equal(await stateOf(ids.failed2), 'ready');
  await page.screenshot({ path: path.join(SHOTS, 'after-retry.png'), fullPage: true });
  await context.close();
});

test('bulk: ticked jobs retried at once', async () => {
  await client.query('SELECT cq.cancel($1)', [ids.failed2]);
  const { page, context } = await open(admin, '/dead-letters?queue=emails&state=cancelled');
  const boxes = page.locator('input[type=checkbox][name=id]');
  const n = await boxes.count();
  assert.ok(n >= 2);
  for (let i = 0; i < n; i++) await boxes.nth(i).check();
  await Promise.all([page.waitForNavigation(), page.locator('button[data-action="retry-selected"]').click()]);
  assert.match(await page.locator('.flash').innerText(), new RegExp(`Retried ${n} jobs`));
  assert.equal(await stateOf(ids.failed2), 'ready');
  assert.equal(await stateOf(ids.cancelled), 'ready');
  await context.close();
});

test('pause stops claims; resume lets them go on', async () => {
  const { page, context } = await open(admin, '/');
  await Promise.all([page.waitForNavigation(), page.locator('tr[data-queue="reports"] button[data-action="pause"]').click()]);
  assert.equal((await client.query("SELECT paused FROM cq.queue_settings WHERE queue = 'reports'")).rows[0].paused, true);
  assert.equal((await client.query("SELECT count(*)::int AS n FROM cq.dequeue('reports', 'w')")).rows[0].n, 0);
  assert.match(await page.locator('tr[data-queue="reports"]').innerText(), /paused/);
  await Promise.all([page.waitForNavigation(), page.locator('tr[data-queue="reports"] button[data-action="resume"]').click()]);
  const claimed = await client.query("SELECT id, attempt FROM cq.dequeue('reports', 'w')");
  assert.equal(claimed.rows.length, 1);
  await client.query('SELECT cq.complete($1, $2)', [claimed.rows[0].id, claimed.rows[0].attempt]);
  await context.close();
});

test('a click on Pause pauses the schedule in the database; Resume resumes it', async () => {
  const paused = async () => (await client.query("SELECT paused, next_run_at FROM claimqueue.schedules WHERE name = 'nightly-report'")).rows[0];
  const { page, context } = await open(admin, '/schedules');
  const row = page.locator('tr[data-schedule="nightly-report"]');
  await Promise.all([page.waitForNavigation(), row.locator('button[data-action="pause-schedule"]').click()]);
  assert.deepEqual(await paused(), { paused: true, next_run_at: null });
  assert.match(await page.locator('.flash').innerText(), /Paused schedule nightly-report/);
  assert.match(await row.innerText(), /paused/);
  await page.screenshot({ path: path.join(SHOTS, 'schedules-paused.png'), fullPage: true });
  await Promise.all([page.waitForNavigation(), row.locator('button[data-action="resume-schedule"]').click()]);
  const resumed = await paused();
  assert.equal(resumed.paused, false);
  assert.ok(resumed.next_run_at > new Date(), 'resumed: its next run is after now');
  assert.equal(await row.locator('button[data-action="pause-schedule"]').count(), 1);
  await context.close();
});

async function post(dashboard, pathname, form, cookie) {
  return fetch(new URL(pathname, dashboard.url), {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(form).toString(),
  });
}

/** A session cookie and its CSRF token, as a page hands them out. */
async function session(dashboard) {
  const r = await fetch(new URL('/', dashboard.url));
  const cookie = r.headers.get('set-cookie').split(';')[0];
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(await r.text())[1];
  return { cookie, csrf };
}

test('a POST without the CSRF token, or with another session\'s, is refused and changes nothing', async () => {
  const { cookie, csrf } = await session(admin);
  const other = await session(admin);
  for (const [form, c] of [[{ queue: 'emails' }, cookie], [{ queue: 'emails', csrf: 'forged' }, cookie],
    [{ queue: 'emails', csrf: other.csrf }, cookie], [{ queue: 'emails', csrf }, null]]) {
    const r = await post(admin, '/actions/pause', form, c);
    assert.equal(r.status, 403);
    assert.match(await r.text(), /CSRF/);
  }
  assert.equal((await client.query("SELECT paused FROM cq.queue_settings WHERE queue = 'emails'")).rows[0].paused, false);
  const ok = await post(admin, '/actions/pause', { queue: 'emails', csrf }, cookie);
  assert.equal(ok.status, 303);
  await post(admin, '/actions/resume', { queue: 'emails', csrf }, cookie);
});

test('a role without manage rights sees no action, and a forged POST gets 403 with the server\'s 42501', async () => {
  for (const p of ['/', '/queues/emails', `/jobs/${ids.failed}`, '/dead-letters', '/schedules']) {
    const { page, context, response } = await open(reader, p);
    assert.equal(response.status(), 200, p);
    assert.equal(await page.locator('button[data-action]').count(), 0, p);
    assert.equal(await page.locator('form[method=post]').count(), 0, p);
    if (p === '/') {
      assert.deepEqual(await page.locator('tr[data-queue]').evaluateAll((r) => r.map((x) => x.dataset.queue)), ['emails']);
      await page.screenshot({ path: path.join(SHOTS, 'reader-overview.png'), fullPage: true });
    }
    if (p === '/schedules') {
      assert.deepEqual(await page.locator('tr[data-schedule]').evaluateAll((r) => r.map((x) => x.dataset.schedule)), ['leap-digest']);
    }
    await context.close();
  }
  const { cookie, csrf } = await session(reader);
  const r = await post(reader, '/actions/retry', { id: String(ids.failed), csrf }, cookie);
  assert.equal(r.status, 403);
  assert.match(await r.text(), /<code class="sqlstate">42501<\/code>/);
  assert.equal(await stateOf(ids.failed), 'failed');
  const p = await post(reader, '/actions/pause', { queue: 'emails', csrf }, cookie);
  assert.equal(p.status, 403);
  assert.match(await p.text(), /42501/);
  const s = await post(reader, '/actions/pause-schedule', { schedule: 'leap-digest', csrf }, cookie);
  assert.equal(s.status, 403);
  assert.match(await s.text(), /42501/);
  assert.equal((await client.query("SELECT paused FROM claimqueue.schedules WHERE name = 'leap-digest'")).rows[0].paused, false);
});

test('--read-only offers no action and accepts none', async () => {
  for (const p of ['/', '/queues/emails', `/jobs/${ids.failed}`, '/dead-letters', '/schedules']) {
    const { page, context } = await open(readOnly, p);
    assert.equal(await page.locator('button[data-action]').count(), 0, p);
    assert.match(await page.locator('header').innerText(), /read-only/);
    await context.close();
  }
  const { cookie, csrf } = await session(readOnly);
  const r = await post(readOnly, '/actions/retry', { id: String(ids.failed), csrf }, cookie);
  assert.equal(r.status, 403);
  assert.equal(await stateOf(ids.failed), 'failed');
});

test('another address than loopback needs credentials, and then asks for them', async () => {
  await assert.rejects(startDashboard({ pool: pools[0], host: '0.0.0.0', port: 0 }), /only with --token or --basic/);
  const d = await startDashboard({ pool: pools[0], host: '127.0.0.1', port: 0, basic: 'ops:s3cret' });
  try {
    assert.equal((await fetch(d.url)).status, 401);
    const auth = 'Basic ' + Buffer.from('ops:s3cret').toString('base64');
    assert.equal((await fetch(d.url, { headers: { authorization: auth } })).status, 200);
    const wrong = 'Basic ' + Buffer.from('ops:nope').toString('base64');
    assert.equal((await fetch(d.url, { headers: { authorization: wrong } })).status, 401);
  } finally {
    await d.server.close();
  }
});

test('live updates: a change in the database shows without a reload', async () => {
  const { page, context } = await open(admin, '/claims');
  const before = await page.locator('tr[data-job]').count();
  const id = (await client.query("SELECT cq.enqueue('emails', '{}') AS id")).rows[0].id;
  await client.query("SELECT * FROM cq.dequeue('emails', 'live-worker', lease => '1 hour')");
  await page.waitForSelector('tr[data-job] >> text=live-worker', { timeout: 20000 });
  assert.ok((await page.locator('tr[data-job]').count()) > before);
  await client.query('SELECT cq.cancel($1)', [id]);
  await context.close();
});
