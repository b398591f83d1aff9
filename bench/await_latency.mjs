// await_jobs() wake latency (see bench/README.md, "The other scripts"). Run by
// bench/await_latency.sh inside its own cluster; connection settings come
// from the PG* environment variables. Prints a markdown report.
//
// Each round: the requester enqueues (autocommit) and starts CALL
// await_jobs(ids, '30s'); once its backend sleeps in the wait (wait_event
// Extension, seen in pg_stat_activity), the worker claims the jobs and
// completes them one statement each (autocommit), each with a result.
// Latency = when the requester's CALL returned - when the worker's last
// complete() returned (its commit), both on this process's clock. Single:
// one job per round; fan-in: ten jobs per round, measured from the tenth
// commit.
import { connect, sleep, summary } from './latency_clients.mjs';
import { performance } from 'perf_hooks';

const ROUNDS = Number(process.env.ROUNDS ?? 300);
const FANIN_ROUNDS = Number(process.env.FANIN_ROUNDS ?? 50);
const FANIN = 10;

const requester = await connect('bench-await-requester');
const worker = await connect('bench-await-worker');
const observer = await connect('bench-await-observer');

async function requesterSleeps() {
  for (;;) {
    const { rows } = await observer.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'bench-await-requester'" +
      " AND wait_event_type = 'Extension'");
    if (rows[0].n === 1) return;
    await sleep(1);
  }
}

async function round(n) {
  const { rows } = await requester.query(
    "SELECT array_agg(id ORDER BY id) AS ids FROM enqueue_batch('lat_await', array_fill('{}'::jsonb, ARRAY[$1::int])) AS id",
    [n]);
  const ids = rows[0].ids;
  let returnedAt = 0;
  const waiting = requester.query("CALL await_jobs($1::bigint[], '30 seconds')", [ids]).then((r) => {
    returnedAt = performance.now();
    return r.rows[0].jobs;
  });
  await requesterSleeps();
  const claimed = await worker.query("SELECT id, attempt FROM dequeue('lat_await', 'w', batch => $1)", [n]);
  let committedAt = 0;
  for (const job of claimed.rows) {
    await worker.query("SELECT complete($1, $2, '{\"ok\": true}')", [job.id, job.attempt]);
    committedAt = performance.now();
  }
  const jobs = await waiting;
  if (jobs.length !== n || jobs.some((j) => j.state !== 'done' || !j.result || !j.result.ok))
    throw new Error(`await_jobs returned ${JSON.stringify(jobs)}`);
  return returnedAt - committedAt;
}

const single = [];
for (let i = 0; i < ROUNDS; i++) single.push(await round(1));
const fanin = [];
for (let i = 0; i < FANIN_ROUNDS; i++) fanin.push(await round(FANIN));
await Promise.all([requester.end(), worker.end(), observer.end()]);

console.log(`### From the finishing commit to await_jobs' return (ms)\n`);
console.log('The requester sleeps in `CALL await_jobs(ids, \'30 seconds\')` before the worker claims; ' +
  'the worker completes each job in its own autocommit statement, with a result. Measured from the ' +
  "return of the last `complete()` to the return of the `CALL`, on the client's clock.\n");
console.log('| wait | rounds | p50 | p99 | max | mean |');
console.log('|---|---|---|---|---|---|');
console.log(summary('one job', single));
console.log(summary(`fan-in: ${FANIN} jobs, from the last commit`, fanin));
