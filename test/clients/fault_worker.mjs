// One worker process of the client fault test (run.sh), on the node library.
//   node fault_worker.mjs NAME QUEUE CONCURRENCY LEASE_MS
// Each job writes its effect row in the transaction that completes it
// (completeInTransaction). Payload flags: fail -> the first attempt throws;
// slow -> the handler runs past the lease (heartbeats keep it); snooze -> the
// first attempt snoozes the job (no attempt spent); stuck -> the first attempt
// ignores its abort signal past the per-job timeout and its grace, then tries
// to complete: the worker has failed the job meanwhile, so that completion
// must raise QC003 and write nothing. Prints one
// line per event ("done 17 1", "lost 17 2 QC003", "error QC003 ..."), which
// run.sh counts.
import pg from 'pg';
import { Worker } from 'claimqueue';

const [name, queue, concurrency, leaseMs] = process.argv.slice(2);
// Longer than the slow jobs' run (1.25 leases): only the stuck ones reach it.
const timeoutMs = Number(leaseMs) * 2;
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
  timeout: timeoutMs,
  timeoutGrace: 200,
  handler: async (job) => {
    if (job.payload.fail && job.attempt === 1) throw new Error('injected failure');
    if (job.payload.snooze && job.attempt === 1) return job.snooze(0);
    if (job.payload.stuck && job.attempt === 1) {
      await new Promise((resolve) => setTimeout(resolve, timeoutMs + 500));   // deaf to job.signal
      try {
        await job.completeInTransaction((client) => client.query(
          'INSERT INTO fault_effects (job_id, attempt, worker) VALUES ($1, $2, $3)', [job.id, job.attempt, name]));
        say(`stuck_completed ${job.id} ${job.attempt}`);
      } catch (err) {
        say(`stuck_refused ${job.id} ${job.attempt} ${err.code ?? '-'}`);
      }
      return undefined;
    }
    await sleep(job.payload.slow ? Number(leaseMs) * 1.25 : 5 + (job.id % 10), job.signal);
    if (job.signal.aborted) throw job.signal.reason;
    await job.completeInTransaction((client) => client.query(
      'INSERT INTO fault_effects (job_id, attempt, worker) VALUES ($1, $2, $3)', [job.id, job.attempt, name]));
  },
});
worker.on('done', (job) => say(`done ${job.id} ${job.attempt}`));
worker.on('failed', (job, err, outcome) =>
  say(`failed ${job.id} ${job.attempt} ${outcome}${err?.name === 'JobTimeoutError' ? ' timeout' : ''}`));
worker.on('lost', (job, err) => say(`lost ${job.id} ${job.attempt} ${err.code}`));
worker.on('handedBack', (job) => say(`handed_back ${job.id} ${job.attempt}`));
worker.on('snoozed', (job) => say(`snoozed ${job.id} ${job.attempt}`));
worker.on('error', (err) => say(`error ${err?.code ?? '-'} ${String(err?.message ?? err).replace(/\n/g, ' ')}`));
worker.on('stopping', () => say('stopping'));
say('ready');
await worker.run();
await pool.end();
say('stopped');
