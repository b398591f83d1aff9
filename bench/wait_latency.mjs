// Waiting dequeue against polling, in one run (see bench/README.md, "Waiting
// dequeue"). Run by bench/wait_latency.sh inside its own cluster; connection
// settings come from the PG* environment variables. Prints a markdown report.
//
// 1. Latency: one producer enqueues JOBS jobs into each of two queues, one at a
//    time (autocommit), 20-80 ms apart. WORKERS workers wait on `lat_wait` with
//    CALL dequeue_wait(wait => '30s'); WORKERS others poll `lat_poll` with
//    dequeue() and sleep 100 ms when it is empty. Latency = when the worker's
//    call returns the job - when the producer's enqueue returned (its commit),
//    both on this process's clock. Workers complete each job.
// 2. Idle CPU: IDLE workers wait on an empty queue for IDLE_SECONDS (CALL
//    dequeue_wait, wait longer than that), then IDLE workers poll it every
//    100 ms for as long; CPU time of their server backends from /proc, and of
//    this client process.
import { connect, sleep, summary } from './latency_clients.mjs';
import { readFileSync } from 'fs';
import { performance } from 'perf_hooks';

const JOBS = Number(process.env.JOBS ?? 500);
const WORKERS = Number(process.env.WORKERS ?? 4);
const IDLE = Number(process.env.IDLE ?? 32);
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 60);

// CPU seconds (user + system) of a process, from /proc/<pid>/stat.
const ticks = 100;  // getconf CLK_TCK on Linux
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

async function latency() {
  const committedAt = new Map();   // job id -> when its enqueue returned
  const lat = { wait: [], poll: [] };
  let stop = false;

  const record = (queue, rows, now) => {
    for (const job of rows) {
      const t = committedAt.get(String(job.id));
      if (t !== undefined) lat[queue].push(now - t);
    }
  };

  const waiters = [];
  for (let i = 0; i < WORKERS; i++) {
    waiters.push((async () => {
      const c = await connect(`bench-wait-${i}`);
      while (!stop) {
        const { rows } = await c.query(
          "CALL dequeue_wait('lat_wait', $1, wait => '30s')", [`wait-${i}`]);
        const now = performance.now();
        const jobs = rows[0].jobs;
        record('wait', jobs, now);
        for (const job of jobs) await c.query('SELECT complete($1, $2)', [job.id, job.attempt]);
      }
      await c.end();
    })());
  }
  const pollers = [];
  for (let i = 0; i < WORKERS; i++) {
    pollers.push((async () => {
      const c = await connect(`bench-poll-${i}`);
      while (!stop) {
        const { rows } = await c.query(
          "SELECT id, attempt FROM dequeue('lat_poll', $1)", [`poll-${i}`]);
        const now = performance.now();
        if (rows.length === 0) { await sleep(100); continue; }
        record('poll', rows, now);
        for (const job of rows) await c.query('SELECT complete($1, $2)', [job.id, job.attempt]);
      }
      await c.end();
    })());
  }

  await sleep(2000);  // every worker connected and waiting or polling
  const producer = await connect('bench-producer');
  for (let n = 0; n < JOBS; n++) {
    for (const queue of ['lat_wait', 'lat_poll']) {
      const { rows } = await producer.query('SELECT enqueue($1) AS id', [queue]);
      committedAt.set(String(rows[0].id), performance.now());
      await sleep(20 + Math.random() * 60);
    }
  }
  // Let the last jobs arrive, then release the waiters with one job each.
  const end = Date.now() + 15000;
  while ((lat.wait.length < JOBS || lat.poll.length < JOBS) && Date.now() < end) await sleep(100);
  stop = true;
  await producer.query(
    "SELECT count(*) FROM enqueue_batch('lat_wait', array_fill('{}'::jsonb, ARRAY[$1::int]))", [WORKERS]);
  await Promise.all([...waiters, ...pollers]);
  await producer.end();
  return lat;
}

async function backendPids(prefix) {
  const c = await connect('bench-observer');
  const { rows } = await c.query(
    'SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1', [`${prefix}%`]);
  await c.end();
  return rows.map((r) => r.pid);
}

async function idleCpu(kind) {
  let stop = false;
  const clients = [];
  for (let i = 0; i < IDLE; i++) clients.push(await connect(`bench-idle-${kind}-${i}`));
  const loops = clients.map((c, i) => (async () => {
    while (!stop) {
      if (kind === 'wait') {
        await c.query("CALL dequeue_wait('idle', $1, wait => $2::interval)",
          [`idle-${i}`, `${IDLE_SECONDS + 30} seconds`]).catch(() => {});
        return;  // one long wait; ended by the cancel below
      }
      await c.query("SELECT id FROM dequeue('idle', $1)", [`idle-${i}`]);
      await sleep(100);
    }
  })());
  await sleep(2000);
  const pids = await backendPids(`bench-idle-${kind}-`);
  const before = pids.map(cpuSeconds);
  const clientBefore = process.cpuUsage();
  await sleep(IDLE_SECONDS * 1000);
  const after = pids.map(cpuSeconds);
  const client = process.cpuUsage(clientBefore);
  stop = true;
  if (kind === 'wait') {
    const c = await connect('bench-observer');
    await c.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'bench-idle-wait-%'");
    await c.end();
  }
  await Promise.all(loops);
  await Promise.all(clients.map((c) => c.end()));
  const server = after.reduce((a, b, i) => a + b - before[i], 0);
  return { backends: pids.length, server, client: (client.user + client.system) / 1e6 };
}

const lat = await latency();
const idleWait = await idleCpu('wait');
const idlePoll = await idleCpu('poll');

console.log(`### Latency from enqueue commit to the worker's return (ms)\n`);
console.log(`${JOBS} jobs per queue, one producer (one job per commit, 20-80 ms apart, alternating queues), ` +
  `${WORKERS} workers per queue.\n`);
console.log('| worker | jobs | p50 | p99 | max | mean |');
console.log('|---|---|---|---|---|---|');
console.log(summary("waiting: CALL dequeue_wait(wait => '30s')", lat.wait));
console.log(summary('polling: dequeue(), 100 ms sleep when empty', lat.poll));
console.log(`\n### Idle CPU over ${IDLE_SECONDS} s, ${IDLE} workers, empty queue\n`);
console.log('| workers | backends measured | server CPU s | server CPU % of one core | client CPU s |');
console.log('|---|---|---|---|---|');
for (const [label, r] of [['waiting (one dequeue_wait each)', idleWait], ['polling every 100 ms', idlePoll]]) {
  console.log(`| ${label} | ${r.backends} | ${r.server.toFixed(2)} | ${(100 * r.server / IDLE_SECONDS).toFixed(2)} | ${r.client.toFixed(2)} |`);
}
