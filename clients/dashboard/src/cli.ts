#!/usr/bin/env node
// claimqueue: the operator's command line. Tables for people, --json for
// scripts, and exit codes a script can trust (USAGE below). The connection comes
// from --url, else CLAIMQUEUE_URL, else the PG* variables.

import { Inspector, JOB_STATES } from 'claimqueue';
import type { JobRow, JobState } from 'claimqueue';
import type { Pool } from 'pg';
import { type Actions, adminActions } from './actions';
import { makePool } from './connect';
import { startDashboard } from './server';

export const EXIT = {
  ok: 0,
  /** Any other failure (a server error not listed here). */
  error: 1,
  /** Wrong command line. */
  usage: 2,
  /** No connection, or no claimqueue extension in the database. */
  connection: 3,
  /** The server refused: the role lacks the privilege (42501). */
  denied: 4,
  /** No such queue or job, or none this role may see. */
  notFound: 5,
  /** The job or queue is not in a state that allows it (QC004, QC005, 55006). */
  conflict: 6,
} as const;

const USAGE = `usage: claimqueue [--url URL] [--json] COMMAND [ARGS]

commands:
  status                         queues, depth and totals, and the reaper
  queues                         every queue with its settings and depth
  jobs --queue Q [--state S] [--key K] [--id N] [--limit N] [--after CURSOR]
                                 a page of a queue's jobs (S: ${JOB_STATES.join(', ')})
  job ID                         one job: payload, result, each attempt's error
  retry ID...                    failed or cancelled jobs back to ready
  retry --queue Q [--state failed|cancelled] [--all]
                                 every dead letter of the queue back to ready
  cancel ID...                   ready or running jobs cancelled
  cancel --queue Q [--state ready|running] --all
  pause QUEUE / resume QUEUE
  pause --schedule NAME / resume --schedule NAME
                                 a paused schedule fires no job; resumed, it runs
                                 from its next slot, none of those it missed
  schedules [--queue Q]
  dashboard [--host H] [--port P] [--token T | --basic USER:PASSWORD] [--read-only]
                                 the web dashboard (127.0.0.1:8089 by default)

connection: --url postgres://..., or CLAIMQUEUE_URL, or PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD

exit codes: 0 done; 1 other error; 2 wrong command line; 3 no connection or no extension;
            4 permission denied (42501); 5 no such queue, job or schedule; 6 not in a state that allows it
`;

class UsageError extends Error {}

interface Parsed {
  command: string;
  positional: string[];
  flags: Map<string, string | true>;
}

const VALUED = new Set(['url', 'queue', 'schedule', 'state', 'key', 'id', 'limit', 'after', 'host', 'port', 'token', 'basic']);
const BOOLEAN = new Set(['json', 'all', 'read-only', 'help']);

export function parse(argv: string[]): Parsed {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      let name = a.slice(2);
      let value: string | undefined;
      const eq = name.indexOf('=');
      if (eq >= 0) { value = name.slice(eq + 1); name = name.slice(0, eq); }
      if (VALUED.has(name)) {
        if (value === undefined) {
          if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
          value = argv[++i];
        }
        flags.set(name, value);
      } else if (BOOLEAN.has(name) && value === undefined) {
        flags.set(name, true);
      } else {
        throw new UsageError(`unknown option --${name}`);
      }
    } else {
      positional.push(a);
    }
  }
  const command = positional.shift() ?? (flags.has('help') ? 'help' : '');
  return { command, positional, flags };
}

function str(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

function intFlag(p: Parsed, name: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v)) throw new UsageError(`--${name} takes a whole number, not ${v}`);
  return Number(v);
}

function ids(values: string[]): number[] {
  return values.map((v) => {
    if (!/^[0-9]{1,18}$/.test(v)) throw new UsageError(`not a job id: ${v}`);
    return Number(v);
  });
}

/** Rows as an aligned text table. */
export function table(headers: string[], rows: unknown[][]): string {
  const cell = (v: unknown) => (v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v).replace(/\s+/g, ' '));
  const text = rows.map((r) => r.map(cell));
  const widths = headers.map((h, i) => Math.min(60, Math.max(h.length, ...text.map((r) => r[i].length))));
  const line = (r: string[]) => r.map((c, i) => (c.length > widths[i] ? c.slice(0, widths[i] - 1) + '…' : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n') + '\n';
}

function out(s: string) {
  process.stdout.write(s);
}

function jobTable(rows: JobRow[]): string {
  return table(['id', 'queue', 'state', 'attempt', 'key', 'created', 'finished', 'worker', 'last error'],
    rows.map((j) => [j.id, j.queue, j.state, `${j.attempt}/${j.maxAttempts}`, j.dedupKey ?? j.concurrencyKey,
      j.createdAt, j.finishedAt ?? j.leaseExpiresAt, j.worker, j.lastError]));
}

class NotFound extends Error {}

async function run(p: Parsed, pool: Pool, actions: Actions | null): Promise<number> {
  const json = p.flags.has('json');
  const inspector = new Inspector(pool);
  await inspector.schema();  // no extension: the connection's exit code, before anything else
  const act = actions ?? adminActions(pool);
  const emit = (value: unknown, text: () => string) => out(json ? JSON.stringify(value, null, 2) + '\n' : text());
  switch (p.command) {
    case 'status': {
      const queues = await inspector.overview();
      const reapers = await inspector.reapers();
      emit({ queues, reapers }, () =>
        table(['queue', 'state', 'ready', 'running', 'oldest ready s', 'completed', 'failed'],
          queues.map((q) => [q.queue, q.paused ? 'paused' : 'active', q.readyOrScheduled, q.running,
            q.oldestReadyAge === null ? null : q.oldestReadyAge.toFixed(1), q.completed, q.failed])) +
        '\n' + table(['database', 'reaper', 'pid', 'last pass', 'last error'],
          reapers.map((r) => [r.database, r.state, r.pid, r.lastPassAt, r.lastError])));
      return EXIT.ok;
    }
    case 'queues': {
      const queues = await inspector.overview();
      const settings = await Promise.all(queues.map((q) => inspector.queue(q.queue)));
      const rows = queues.map((q, i) => ({ ...q, settings: settings[i] }));
      emit(rows, () => table(['queue', 'state', 'ready', 'running', 'lease', 'max attempts', 'retention', 'max running', 'manage'],
        rows.map((r) => [r.queue, r.paused ? 'paused' : 'active', r.readyOrScheduled, r.running, r.settings?.lease,
          r.settings?.maxAttempts, r.settings?.retention, r.maxRunning, r.canManage ? 'yes' : 'no'])));
      return EXIT.ok;
    }
    case 'jobs': {
      const queue = str(p, 'queue');
      if (!queue) throw new UsageError('jobs needs --queue');
      const state = str(p, 'state');
      if (state !== undefined && !JOB_STATES.includes(state as JobState)) throw new UsageError(`--state takes one of ${JOB_STATES.join(', ')}, not ${state}`);
      if ((await inspector.queue(queue)) === null) throw new NotFound(`no queue ${queue} (or this role holds no privilege on it)`);
      let page;
      try {
        page = await inspector.jobs({ queue, state: state as JobState | undefined, key: str(p, 'key'), id: intFlag(p, 'id'),
          limit: intFlag(p, 'limit'), after: str(p, 'after') });
      } catch (err) {
        if (err instanceof RangeError) throw new UsageError(err.message);
        throw err;
      }
      emit(page, () => jobTable(page.rows) + (page.next ? `next page: --after ${page.next}\n` : ''));
      return EXIT.ok;
    }
    case 'job': {
      const [id] = ids(p.positional.slice(0, 1));
      if (id === undefined || p.positional.length !== 1) throw new UsageError('job takes one job id');
      const job = await inspector.job(id);
      if (!job) throw new NotFound(`no job ${id} (or this role holds no privilege on its queue)`);
      const errors = await inspector.jobErrors(id);
      emit({ ...job, errors }, () =>
        table(['field', 'value'], [
          ['id', job.id], ['queue', job.queue], ['state', job.state], ['attempt', `${job.attempt}/${job.maxAttempts}`],
          ['priority', job.priority], ['created', job.createdAt], ['run at', job.runAt], ['started', job.startedAt],
          ['finished', job.finishedAt], ['lease ends', job.leaseExpiresAt], ['worker', job.worker],
          ['dedup key', job.dedupKey], ['concurrency key', job.concurrencyKey],
        ]) + `\npayload:\n${JSON.stringify(job.payload, null, 2)}\n\nresult:\n${JSON.stringify(job.result, null, 2)}\n` +
        (errors.length ? '\n' + table(['attempt', 'failed at', 'error'], errors.map((e) => [e.attempt, e.failedAt, e.error])) : ''));
      return EXIT.ok;
    }
    case 'retry':
    case 'cancel': {
      const queue = str(p, 'queue');
      if (queue !== undefined) {
        if (p.positional.length > 0) throw new UsageError(`${p.command} takes job ids or --queue, not both`);
        const state = str(p, 'state');
        let count: number;
        if (p.command === 'retry') {
          const states = state ? [state] : ['failed'];
          count = await act.retryJobs(queue, states);
        } else {
          if (!p.flags.has('all')) throw new UsageError('cancel --queue cancels every ready job of the queue: add --all to say so');
          count = await act.cancelJobs(queue, state ? [state] : ['ready']);
        }
        emit({ queue, [p.command === 'retry' ? 'retried' : 'cancelled']: count }, () => `${p.command === 'retry' ? 'retried' : 'cancelled'} ${count} jobs of ${queue}\n`);
        return EXIT.ok;
      }
      const list = ids(p.positional);
      if (list.length === 0) throw new UsageError(`${p.command} takes job ids, or --queue`);
      for (const id of list) {
        if (p.command === 'retry') await act.retry(id);
        else await act.cancel(id);
      }
      emit({ [p.command === 'retry' ? 'retried' : 'cancelled']: list }, () => `${p.command === 'retry' ? 'retried' : 'cancelled'} ${list.join(', ')}\n`);
      return EXIT.ok;
    }
    case 'pause':
    case 'resume': {
      const schedule = str(p, 'schedule');
      if (schedule !== undefined) {
        if (p.positional.length !== 0) throw new UsageError(`${p.command} takes one queue or --schedule NAME, not both`);
        const changed = p.command === 'pause' ? await act.pauseSchedule(schedule) : await act.resumeSchedule(schedule);
        emit({ schedule, changed }, () => `schedule ${schedule}: ${changed ? (p.command === 'pause' ? 'paused' : 'resumed') : `already ${p.command === 'pause' ? 'paused' : 'active'}`}\n`);
        return EXIT.ok;
      }
      if (p.positional.length !== 1) throw new UsageError(`${p.command} takes one queue`);
      const queue = p.positional[0];
      const changed = p.command === 'pause' ? await act.pause(queue) : await act.resume(queue);
      emit({ queue, changed }, () => `${queue}: ${changed ? (p.command === 'pause' ? 'paused' : 'resumed') : `already ${p.command === 'pause' ? 'paused' : 'active'}`}\n`);
      return EXIT.ok;
    }
    case 'schedules': {
      const rows = await inspector.schedules(str(p, 'queue'));
      emit(rows, () => table(['name', 'queue', 'cron', 'time zone', 'next run', 'last run', 'state'],
        rows.map((s) => [s.name, s.queue, s.cron, s.timezone, s.nextRunAt, s.lastRunAt,
          s.paused ? 'paused' : s.enabled ? 'active' : 'disabled'])));
      return EXIT.ok;
    }
    default:
      throw new UsageError(p.command ? `unknown command ${p.command}` : 'no command');
  }
}

/** The exit code for an error: usage, connection, the server's SQLSTATE. */
export function exitCodeOf(err: any): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof NotFound) return EXIT.notFound;
  const code: string | undefined = err?.code;
  if (code === '42501') return EXIT.denied;
  if (code === 'QC001' || code === 'QC002' || code === 'QC006' || code === '3D000') return code === '3D000' ? EXIT.connection : EXIT.notFound;
  if (code === 'QC004' || code === 'QC005' || code === '55006') return EXIT.conflict;
  if (code === '28P01' || code === '28000' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' ||
      code === '57P03' || /extension is not installed/.test(err?.message ?? '')) return EXIT.connection;
  if (code?.startsWith?.('22')) return EXIT.usage;
  return EXIT.error;
}

export async function main(argv: string[], actions: Actions | null = null): Promise<number> {
  let p: Parsed;
  try {
    p = parse(argv);
  } catch (err: any) {
    process.stderr.write(`claimqueue: ${err.message}\n${USAGE}`);
    return EXIT.usage;
  }
  if (p.command === 'help' || p.flags.has('help')) {
    out(USAGE);
    return EXIT.ok;
  }
  if (p.command === 'dashboard') {
    try {
      const port = intFlag(p, 'port');
      const d = await startDashboard({
        url: str(p, 'url'), host: str(p, 'host'), port: port === undefined ? undefined : port,
        token: str(p, 'token') ?? process.env.CLAIMQUEUE_DASHBOARD_TOKEN, basic: str(p, 'basic'),
        readOnly: p.flags.has('read-only'), actions: actions ?? undefined,
      });
      out(`claimqueue dashboard: ${d.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await d.close();
      return EXIT.ok;
    } catch (err: any) {
      process.stderr.write(`claimqueue: ${err?.message ?? err}\n`);
      return err instanceof UsageError ? EXIT.usage : /binds .* only with/.test(err?.message ?? '') ? EXIT.usage : exitCodeOf(err);
    }
  }
  const pool = makePool(str(p, 'url'), 2);
  try {
    return await run(p, pool, actions);
  } catch (err: any) {
    const code = exitCodeOf(err);
    process.stderr.write(`claimqueue: ${err?.message ?? err}${err?.code && /^[0-9A-Z]{5}$/.test(err.code) ? ` (SQLSTATE ${err.code})` : ''}\n`);
    if (code === EXIT.usage && err instanceof UsageError) process.stderr.write(USAGE);
    return code;
  } finally {
    await pool.end().catch(() => {});
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
