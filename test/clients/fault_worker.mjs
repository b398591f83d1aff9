// One worker process of the client fault test (run.sh), on the node library.
//   node fault_worker.mjs NAME QUEUE CONCURRENCY LEASE_MS
// Each job writes its effect row in the transaction that completes it
// (completeInTransaction). Payload flags: fail -> the first attempt throws;
// slow -> the handler runs past the lease (heartbeats keep it). Prints one
// line per event ("done 17 1", "lost 17 2 QC003", "error QC003 ..."), which
// run.sh counts.
import pg from 'pg';
import { Worker } from 'claimqueue';

const [name, queue, concurrency, leaseMs] = process.argv.slice(2);
const pool = new pg.Pool({ max: Number(concurrency) + 3, application_name: name });
pool.on('error', () => {});
const say = (line) => process.stdout.write(line + '\n');

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

const worker = new Worker({
  pool,
  queue,
  name,
  concurrency: Number(concurrency),
  lease: Number(leaseMs),
  grace: 1000,
  logger: null,
  handler: async (job) => {
    if (job.payload.fail && job.attempt === 1) throw new Error('injected failure');
    await sleep(job.payload.slow ? Number(leaseMs) * 1.25 : 5 + (job.id % 10), job.signal);
    if (job.signal.aborted) throw job.signal.reason;
    await job.completeInTransaction((client) => client.query(
      'INSERT INTO fault_effects (job_id, attempt, worker) VALUES ($1, $2, $3)', [job.id, job.attempt, name]));
  },
});
worker.on('done', (job) => say(`done ${job.id} ${job.attempt}`));
worker.on('failed', (job, err, outcome) => say(`failed ${job.id} ${job.attempt} ${outcome}`));
worker.on('lost', (job, err) => say(`lost ${job.id} ${job.attempt} ${err.code}`));
worker.on('handedBack', (job) => say(`handed_back ${job.id} ${job.attempt}`));
worker.on('error', (err) => say(`error ${err?.code ?? '-'} ${String(err?.message ?? err).replace(/\n/g, ' ')}`));
worker.on('stopping', () => say('stopping'));
say('ready');
await worker.run();
await pool.end();
say('stopped');
