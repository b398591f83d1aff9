// A claimqueue worker on the node library (clients/node), runnable:
//   node worker.mjs QUEUE [CONCURRENCY]
// Connection settings come from the usual PG* environment variables. Each job's
// effect row is written in the transaction that completes the job
// (completeInTransaction): both commit or neither does, so a job whose claim
// went stale (QC003) leaves no effect. SIGTERM or SIGINT stops it: no new
// claims, running jobs finish (or are handed back after the grace period).
import pg from 'pg';
import { Worker } from 'claimqueue';

const queue = process.argv[2] ?? 'default';
const concurrency = Number(process.argv[3] ?? 4);
const pool = new pg.Pool({ max: concurrency + 2 });

const worker = new Worker({
  pool,
  queue,
  concurrency,
  handler: async (job) => {
    await job.completeInTransaction((client) => client.query(
      'INSERT INTO node_effects (job_id, attempt, worker) VALUES ($1, $2, $3)',
      [job.id, job.attempt, worker.name]));
  },
});
let completed = 0;
worker.on('done', () => completed++);
await worker.run();                       // until SIGTERM or SIGINT
console.log(`node worker completed ${completed} jobs`);
await pool.end();
