// Every query a page runs, EXPLAINed on a database with 20,000 finished jobs
// (analyzed): none reads claimqueue.jobs by a sequential scan, every read of it
// goes through an index, and the overview reads no job at all. The queries are
// recorded as the Inspector runs them, so a new page query is checked too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Inspector, KEY_WINDOW } from 'claimqueue';
import { connect, dropDatabase, makeDatabase } from './fixture.mjs';

const DB = 'cq_dashboard_explain';
let client;
let ids;

before(async () => {
  ids = await makeDatabase(DB, { doneJobs: 20000 });
  client = await connect(DB);
});
after(async () => {
  await client?.end();
  await dropDatabase(DB);
});

/** An Inspector whose queries are kept, to be EXPLAINed. */
function recording() {
  const seen = [];
  const db = {
    query: async (text, values) => {
      seen.push({ text, values });
      return client.query(text, values);
    },
  };
  return { inspector: new Inspector(db), seen };
}

function scans(plan, out = []) {
  if (plan['Relation Name']) out.push({ type: plan['Node Type'], relation: plan['Relation Name'], index: plan['Index Name'] ?? null });
  if (plan['Node Type'] === 'Bitmap Index Scan') out.push({ type: plan['Node Type'], relation: null, index: plan['Index Name'] });
  for (const child of plan.Plans ?? []) scans(child, out);
  return out;
}

async function explain(q) {
  const { rows } = await client.query('EXPLAIN (FORMAT JSON) ' + q.text, q.values);
  return scans(rows[0]['QUERY PLAN'][0].Plan);
}

async function checkQueries(name, run, { readsJobs = true } = {}) {
  const { inspector, seen } = recording();
  await run(inspector);
  const pages = seen.filter((q) => /queue_jobs|queue_metrics|queue_history|advisory_locks|schedules|reaper_stats/.test(q.text));
  assert.ok(pages.length > 0, `${name}: no page query recorded`);
  for (const q of pages) {
    const nodes = await explain(q);
    const onJobs = nodes.filter((n) => n.relation === 'jobs');
    assert.deepEqual(onJobs.filter((n) => n.type === 'Seq Scan'), [], `${name}: a sequential scan of jobs in\n${q.text}`);
    for (const n of onJobs) assert.match(n.type, /Index|Bitmap/, `${name}: ${n.type} on jobs`);
    if (!readsJobs) assert.deepEqual(onJobs, [], `${name}: reads jobs`);
  }
  return seen;
}

test('the overview and the chart read no job row', async () => {
  await checkQueries('overview', async (i) => { await i.overview(); await i.history(60); }, { readsJobs: false });
});

for (const state of [undefined, 'ready', 'scheduled', 'running', 'done', 'failed', 'cancelled']) {
  test(`a page of a queue's ${state ?? 'jobs'} and the next page use an index`, async () => {
    await checkQueries(`jobs ${state}`, async (i) => {
      const first = await i.jobs({ queue: 'emails', state, limit: 2 });
      if (first.next) await i.jobs({ queue: 'emails', state, limit: 2, after: first.next });
      await i.jobs({ queue: 'emails', state, key: 'mail-d', limit: 2 });
      await i.jobs({ queue: 'emails', state, id: ids.failed, limit: 2 });
    });
  });
}

test('the ready page walks the ready jobs\' index in claim order', async () => {
  const { inspector, seen } = recording();
  const page = await inspector.jobs({ queue: 'reports', state: 'ready', limit: 1 });
  const next = await inspector.jobs({ queue: 'reports', state: 'ready', limit: 1, after: page.next });
  assert.notEqual(page.rows[0].id, next.rows[0].id);
  const nodes = await explain(seen.at(-1));
  assert.ok(nodes.some((n) => n.index === 'jobs_ready_idx'), JSON.stringify(nodes));
});

test('dead letters, one queue or all, with an error filter, and the next page use an index', async () => {
  await checkQueries('dead letters', async (i) => {
    const first = await i.deadLetters({ limit: 5 });
    assert.equal(first.rows.length, 5);
    assert.ok(first.next);
    await i.deadLetters({ limit: 5, after: first.next });
    await i.deadLetters({ queue: 'reports', state: 'failed', error: 'boo', limit: 5 });
  });
  const { inspector, seen } = recording();
  await inspector.deadLetters({ queue: 'reports', limit: 5 });
  const nodes = await explain(seen.at(-1));
  assert.ok(nodes.some((n) => n.index === 'jobs_dead_letters_idx'), JSON.stringify(nodes));
});

test('running claims, job detail, schedules, reapers and locks use an index or read no job', async () => {
  await checkQueries('claims', async (i) => { await i.claims({}); });
  await checkQueries('job', async (i) => { await i.job(ids.failed); await i.jobErrors(ids.failed); });
  await checkQueries('others', async (i) => { await i.schedules(); await i.reapers(); await i.locks(); }, { readsJobs: false });
});

test('no page query uses OFFSET', async () => {
  const seen = await checkQueries('all', async (i) => {
    await i.overview();
    await i.jobs({ queue: 'emails' });
    await i.deadLetters({});
    await i.claims({});
  });
  for (const q of seen) assert.doesNotMatch(q.text, /\bOFFSET\b/i);
});

test('the done page reads the same rows from done_id_bound as without it', async () => {
  // Live jobs above the newest done one (a drain's backlog), one of them completed: the bound
  // is then below the rest, which the first page's walk no longer reads.
  const { rows: enq } = await client.query("SELECT cq.enqueue('emails', '{}') AS id FROM generate_series(1, 6)");
  const { rows: [job] } = await client.query("SELECT id, attempt FROM cq.dequeue('emails', 'bound-test')");
  await client.query('SELECT cq.complete($1, $2)', [job.id, job.attempt]);
  const { rows: [m] } = await client.query("SELECT done_id_bound FROM cq.queue_metrics WHERE queue = 'emails'");
  assert.ok(m.done_id_bound !== null, 'the queue is counted: its bound is known');
  assert.ok(Number(m.done_id_bound) < Number(enq.at(-1).id), `bound ${m.done_id_bound} below the newest ready job`);
  const { rows: [newest] } = await client.query(
    "SELECT max(id) AS id FROM cq.queue_jobs WHERE queue = 'emails' AND state = 'done'");
  assert.ok(Number(newest.id) <= Number(m.done_id_bound), 'no done job above the bound');

  const inspector = new Inspector(client);
  const settings = await inspector.queue('emails');
  for (const limit of [1, 7, 500]) {
    const withBound = await inspector.jobsQuery({ queue: 'emails', state: 'done', limit }, settings.queueId);
    const without = await inspector.jobsQuery({ queue: 'emails', state: 'done', limit }, settings.queueId,
                                              { doneBound: false });
    assert.match(withBound.text, /done_id_bound/);
    assert.doesNotMatch(without.text, /done_id_bound/);
    const a = await client.query(withBound.text, withBound.values);
    const b = await client.query(without.text, without.values);
    assert.ok(a.rows.length > 0);
    assert.deepEqual(a.rows.map((r) => String(r.id)), b.rows.map((r) => String(r.id)), `limit ${limit}`);
    assert.equal(String(a.rows[0].id), String(newest.id), 'the newest done job first');
  }
  // Walked to the end, page by page: every done job, newest first.
  const seen = [];
  let after = null;
  do {
    const page = await inspector.jobs({ queue: 'emails', state: 'done', limit: 500, after });
    seen.push(...page.rows.map((r) => Number(r.id)));
    after = page.next;
  } while (after);
  const { rows: all } = await client.query(
    "SELECT id FROM cq.queue_jobs WHERE queue = 'emails' AND state = 'done' ORDER BY id DESC");
  assert.deepEqual(seen, all.map((r) => Number(r.id)));
});

test('a key filter finds a dedup key\'s live job and a concurrency key\'s running jobs by their indexes, beyond the window', async () => {
  // In emails (20,000 done jobs): a scheduled job with a dedup key, a running job with a
  // concurrency key, a done job with that key too (both claimed first: the highest priority),
  // and then more ready jobs than the window, all newer: first in the page's order, newest first.
  const one = async (sql) => Number((await client.query(sql)).rows[0].id);
  const scheduled = await one("SELECT cq.enqueue('emails', '{}', run_at => now() + interval '1 day', dedup_key => 'far') AS id");
  const running = await one("SELECT cq.enqueue('emails', '{}', priority => 100, concurrency_key => 'tenant-far') AS id");
  assert.equal(await one("SELECT id FROM cq.dequeue('emails', 'keys-worker')"), running);
  const done = await one("SELECT cq.enqueue('emails', '{}', priority => 100, concurrency_key => 'tenant-far') AS id");
  const { rows: [d] } = await client.query("SELECT id, attempt FROM cq.dequeue('emails', 'keys-worker')");
  assert.equal(Number(d.id), done);
  await client.query('SELECT cq.complete($1, $2)', [done, d.attempt]);
  await client.query("SELECT count(*) FROM cq.enqueue_batch('emails', array_fill('{}'::jsonb, ARRAY[$1::int]))", [KEY_WINDOW + 100]);
  const inspector = new Inspector(client);
  const ids = async (filter) => (await inspector.jobs({ queue: 'emails', ...filter })).rows.map((r) => r.id);
  assert.deepEqual(await ids({ key: 'far' }), [scheduled]);
  assert.deepEqual(await ids({ key: 'far', state: 'scheduled' }), [scheduled]);
  assert.deepEqual(await ids({ key: 'far', state: 'running' }), []);
  assert.deepEqual(await ids({ key: 'tenant-far', state: 'running' }), [running]);
  // The done job is within the window of the done jobs' order; in the order of all states it is
  // not (the window ends among the ready jobs): the running one is found by its index all the same.
  assert.deepEqual(await ids({ key: 'tenant-far', state: 'done' }), [done]);
  assert.deepEqual(await ids({ key: 'tenant-far' }), [running]);
  const { inspector: recorder, seen } = recording();
  await recorder.jobs({ queue: 'emails', key: 'far' });
  const nodes = await explain(seen.at(-1));
  assert.ok(nodes.some((n) => n.index === 'jobs_dedup_idx'), JSON.stringify(nodes));
  assert.ok(nodes.some((n) => n.index === 'jobs_running_key_idx'), JSON.stringify(nodes));
  await checkQueries('keys', async (i) => {
    for (const state of [undefined, 'ready', 'scheduled', 'running', 'done']) await i.jobs({ queue: 'emails', state, key: 'far' });
  });
});
