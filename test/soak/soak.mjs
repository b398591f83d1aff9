// claimqueue fault-injection soak: WORKERS connections drain the queue 'soak'
// while faults are injected at random (see README.md beside this file).
//   node soak.mjs WORKERS LEASE_MS
// Connection settings come from the PG* environment variables. Prints one
// line "faults: k=v ..." at the end; the reconciliation is run.sh's job.
import pg from 'pg';

const workers = Number(process.argv[2] ?? 16);
const leaseMs = Number(process.argv[3] ?? 1000);
const faults = {
  claims: 0, completed: 0, died_after_claim: 0, terminated_by_admin: 0, stalled: 0,
  late_refused: 0, late_accepted: 0, failed: 0, heartbeats: 0, reconnects: 0, server_gone: 0,
};
let stop = false;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect(name) {
  for (;;) {
    const client = new pg.Client({ application_name: name });
    client.on('error', () => {});           // a terminated backend: handled where a query fails
    try {
      await client.connect();
      return client;
    } catch {
      faults.server_gone++;                  // server restarting: try again
      await sleep(200);
    }
  }
}

// Effect row and complete in one transaction: both commit or neither does.
async function finish(client, job, name) {
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO soak_effects (job_id, attempt, worker) VALUES ($1, $2, $3)',
      [job.id, job.attempt, name]);
    await client.query('SELECT complete($1, $2)', [job.id, job.attempt]);
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    if (err.code === 'QC003') return false;  // stale claim: the job was handed to someone else
    throw err;
  }
}

async function worker(i) {
  const name = `soak-${i}`;
  let client = await connect(name);
  while (!stop) {
    try {
      const { rows } = await client.query('SELECT id, attempt FROM dequeue($1, $2)', ['soak', name]);
      if (rows.length === 0) { await sleep(50); continue; }
      const job = rows[0];
      faults.claims++;
      const r = Math.random();
      if (r < 0.01) {                        // die right after the claim: connection closed
        faults.died_after_claim++;
        await client.end().catch(() => {});
        client = await connect(name);
        faults.reconnects++;
      } else if (r < 0.015) {                // stall past the lease, then complete late
        faults.stalled++;
        await sleep(leaseMs + 300 + Math.random() * 500);
        if (await finish(client, job, name)) faults.late_accepted++; else faults.late_refused++;
      } else if (r < 0.05) {                 // the work fails
        faults.failed++;
        await client.query('SELECT fail($1, $2, $3)', [job.id, job.attempt, 'injected failure']);
      } else if (r < 0.10) {                 // long work: heartbeat, then complete
        faults.heartbeats++;
        await client.query('SELECT heartbeat($1, $2)', [job.id, job.attempt]);
        if (await finish(client, job, name)) faults.completed++;
      } else if (await finish(client, job, name)) {
        faults.completed++;
      }
    } catch (err) {
      // Terminated by the admin connection, or the server restarted: reconnect.
      await client.end().catch(() => {});
      client = await connect(name);
      faults.reconnects++;
    }
  }
  await client.end().catch(() => {});
}

// An admin connection that now and then kills a worker's backend mid-flight
// (pg_terminate_backend), and watches for the queue to be drained.
async function admin() {
  let client = await connect('soak-admin');
  let idleChecks = 0;
  while (!stop) {
    await sleep(250);
    try {
      if (Math.random() < 0.3) {
        const { rows } = await client.query(
          `SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity
           WHERE application_name LIKE 'soak-%' AND application_name <> 'soak-admin'
           ORDER BY random() LIMIT 1`);
        if (rows.length && rows[0].t) faults.terminated_by_admin++;
      }
      const { rows } = await client.query(
        `SELECT count(*)::int AS live FROM claimqueue.jobs
         WHERE state IN ('ready', 'running')`);
      idleChecks = rows[0].live === 0 ? idleChecks + 1 : 0;
      if (idleChecks >= 2) stop = true;
    } catch {
      await client.end().catch(() => {});
      client = await connect('soak-admin');
    }
  }
  await client.end().catch(() => {});
}

const started = Date.now();
await Promise.all([admin(), ...Array.from({ length: workers }, (_, i) => worker(i))]);
const secs = (Date.now() - started) / 1000;
console.log('faults: ' + Object.entries(faults).map(([k, v]) => `${k}=${v}`).join(' ') +
            ` seconds=${secs.toFixed(1)}`);
