// A database for the command line and dashboard tests, on the server the PG*
// variables name (pg_virtualenv's): claimqueue installed into a schema of its
// own (so every unqualified call would fail), queues with jobs in every state,
// schedules, an XSS payload, and three roles: an administrator, a reader of
// one queue (consume, no manage), and the login the pages connect as.
import pg from 'pg';

export const XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';

export function urlFor(database, user = process.env.PGUSER, password = null) {
  const host = process.env.PGHOST || 'localhost';
  const port = process.env.PGPORT || '5432';
  const auth = user ? encodeURIComponent(user) + (password ? ':' + encodeURIComponent(password) : '') + '@' : '';
  // A socket directory goes in the query string.
  if (host.startsWith('/')) return `postgres://${auth}localhost:${port}/${database}?host=${encodeURIComponent(host)}`;
  return `postgres://${auth}${host}:${port}/${database}`;
}

async function admin(sql, params) {
  const c = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

/** Makes database `name` afresh and fills it; returns ids of one job per state. */
export async function makeDatabase(name, { doneJobs = 0, history = false } = {}) {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  for (const role of ['cq_test_admin', 'cq_test_reader']) {
    const { rows } = await admin('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    // Another test file may make it at the same moment.
    if (rows.length === 0) {
      await admin(`CREATE ROLE ${role} LOGIN PASSWORD 'secret'`).catch((e) => {
        if (e.code !== '42710' && e.code !== '23505') throw e;
      });
    }
  }
  const c = new pg.Client({ database: name });
  await c.connect();
  const q = (sql, params) => c.query(sql, params);
  try {
    await q('SET client_min_messages = warning');
    await q('CREATE SCHEMA cq');
    await q('CREATE EXTENSION claimqueue SCHEMA cq');
    await q('GRANT USAGE ON SCHEMA cq TO PUBLIC');
    await q('GRANT claimqueue_admin TO cq_test_admin');
    await q('GRANT claimqueue_consumer TO cq_test_reader');
    await q("SELECT cq.create_queue('emails', max_attempts => 1)");
    await q("SELECT cq.create_queue('reports', max_attempts => 3, max_running => 4)");
    await q("SELECT cq.grant_queue('emails', 'consume', 'cq_test_reader')");
    const one = async (sql, params) => (await q(sql, params)).rows[0];
    const ids = {};
    // done
    ids.done = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"a@example.com\"}') AS id")).id);
    let job = await one("SELECT id, attempt FROM cq.dequeue('emails', 'worker-1')");
    await q("SELECT cq.complete($1, $2, '{\"sent\": true}')", [job.id, job.attempt]);
    // failed, with an XSS payload and error
    ids.failed = Number((await one('SELECT cq.enqueue(\'emails\', jsonb_build_object(\'html\', $1::text)) AS id', [XSS])).id);
    job = await one("SELECT id, attempt FROM cq.dequeue('emails', 'worker-1')");
    await q('SELECT cq.fail($1, $2, $3)', [job.id, job.attempt, 'SMTP refused ' + XSS]);
    // a second failed job, for bulk retry
    ids.failed2 = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"b@example.com\"}') AS id")).id);
    job = await one("SELECT id, attempt FROM cq.dequeue('emails', 'worker-1')");
    await q("SELECT cq.fail($1, $2, 'mailbox full')", [job.id, job.attempt]);
    // cancelled
    ids.cancelled = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"c@example.com\"}') AS id")).id);
    await q('SELECT cq.cancel($1)', [ids.cancelled]);
    // running (session-bound: no, a plain lease)
    ids.running = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"d@example.com\"}', dedup_key => 'mail-d') AS id")).id);
    await q("SELECT * FROM cq.dequeue('emails', 'worker-2', lease => '1 hour')");
    // ready
    ids.ready = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"e@example.com\"}', concurrency_key => 'tenant-1') AS id")).id);
    // scheduled
    ids.scheduled = Number((await one("SELECT cq.enqueue('emails', '{\"to\": \"f@example.com\"}', run_at => now() + interval '1 day') AS id")).id);
    // reports: ready jobs, a schedule
    await q("SELECT count(*) FROM cq.enqueue_batch('reports', ARRAY['{\"r\": 1}', '{\"r\": 2}', '{\"r\": 3}']::jsonb[])");
    await q("SELECT cq.schedule('nightly-report', '0 3 * * *', 'reports', '{\"kind\": \"nightly\"}')");
    // A schedule of the reader's queue (it sees it, without a button); 29 February only.
    await q("SELECT cq.schedule('leap-digest', '0 0 29 2 *', 'emails')");
    // An advisory lock namespace (the locks page lists what is held at the time).
    await q("SELECT cq.lock_namespace('billing', 'hash')");
    if (doneJobs > 0) {
      // Many finished jobs, written directly (a superuser's test shortcut), then analyzed,
      // so that the planner sees a table worth an index.
      await q(`INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at, started_at,
                                            finished_at, payload)
               SELECT q.queue_id, 'done', 1, 1, now() - interval '2 hours', now() - interval '2 hours',
                      now() - interval '2 hours', now() - interval '1 hour' + g * interval '1 ms', '{}'
                 FROM claimqueue.queues q, generate_series(1, $1) g WHERE q.name = 'emails'`, [doneJobs]);
      await q(`INSERT INTO claimqueue.jobs (queue_id, state, attempt, max_attempts, run_at, created_at, started_at,
                                            finished_at, payload, last_error)
               SELECT q.queue_id, 'failed', 1, 1, now() - interval '2 hours', now() - interval '2 hours',
                      now() - interval '2 hours', now() - interval '1 hour' + g * interval '1 ms', '{}', 'boom'
                 FROM claimqueue.queues q, generate_series(1, $1 / 10) g WHERE q.name = 'reports'`, [doneJobs]);
      await q('ANALYZE claimqueue.jobs');
      await q('ANALYZE claimqueue.queues');
    }
    await q('SELECT claimqueue.recount_queue_metrics()');
    if (history) {
      // An hour of samples, as the reaper would have taken them, for the chart.
      await q(`INSERT INTO claimqueue.queue_samples
               SELECT q.queue_id, now() - (60 - g) * interval '1 minute',
                      g * 40, g * 40, sum(30 + (g * q.queue_id * 7) % 25) OVER w, 0, 0, 0, 0, 10, 2,
                      m.counters_since - interval '1 hour'
                 FROM claimqueue.queues q
                 JOIN cq.queue_metrics m ON m.queue = q.name,
                      generate_series(1, 59) g
                WHERE q.name IN ('emails', 'reports')
               WINDOW w AS (PARTITION BY q.queue_id ORDER BY g)`);
    }
    await q('SELECT claimqueue.sample_queue_history()');
    return ids;
  } finally {
    await c.end();
  }
}

/** A client on database `name` as the calling (super)user. */
export async function connect(name) {
  const c = new pg.Client({ database: name });
  await c.connect();
  return c;
}

export async function dropDatabase(name) {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
