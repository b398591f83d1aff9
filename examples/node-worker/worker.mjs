// A claimqueue worker in node-postgres: the loop from the README, runnable.
//   node worker.mjs QUEUE [WORKERS] [--exit-when-idle]
// Connection settings come from the usual PG* environment variables.
// Pattern 2 (exactly-once effects): claim, write the job's effect row and
// complete in ONE transaction on one checked-out client; a stale claim
// (SQLSTATE QC003) rolls the whole transaction back.
import pg from 'pg';

const queue = process.argv[2] ?? 'default';
const workers = Number(process.argv[3] ?? 4);
const exitWhenIdle = process.argv.includes('--exit-when-idle');
const pool = new pg.Pool({ max: workers });

async function runWorker(name) {
  let done = 0;
  for (;;) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(
        'SELECT id, payload, attempt FROM dequeue($1, $2)', [queue, name]);
      if (rows.length === 0) {               // nothing claimable right now
        await client.query('COMMIT');
        if (exitWhenIdle) return done;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const job = rows[0];
      await client.query(
        'INSERT INTO node_effects (job_id, attempt, worker) VALUES ($1, $2, $3)',
        [job.id, job.attempt, name]);
      await client.query('SELECT complete($1, $2)', [job.id, job.attempt]);
      await client.query('COMMIT');
      done++;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      if (err.code !== 'QC003') throw err;   // stale claim: someone else owns the job now
    } finally {
      client.release();
    }
  }
}

const counts = await Promise.all(
  Array.from({ length: workers }, (_, i) => runWorker(`node-${process.pid}-${i}`)));
console.log(`node workers completed ${counts.reduce((a, b) => a + b, 0)} jobs (${counts.join(' + ')})`);
await pool.end();
