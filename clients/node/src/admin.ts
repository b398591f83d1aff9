// ClaimQueue: the whole SQL API from Node, typed, over a pg.Pool (yours or one
// made from a connection string): queues, schedules, retry and cancel, dead
// letters, job status, errors and results, metrics, and enqueueing with
// per-job options. Every call is qualified with the extension's schema, found
// at connect together with its version (schema.ts). Grants stay SQL-only:
// grant_queue / revoke_queue (docs/queues-and-roles.md).

import { enqueue, enqueueBatch, enqueueMany, jobId } from './enqueue';
import type { BatchJob, EnqueueBatchOptions, EnqueueOptions } from './enqueue';
import { toClaimQueueError } from './errors';
import { awaitJobs, jobErrors, jobStatus } from './results';
import type { AwaitJobsOptions, JobError, JobStatus } from './results';
import { extensionOf } from './schema';
import type { ExtensionInfo } from './schema';
import type { PoolLike } from './types';

/** A duration: milliseconds, or a PostgreSQL interval literal such as '5 minutes'. */
export type Duration = number | string;

export interface QueueOptions {
  lease?: Duration;
  maxAttempts?: number;
  backoffBase?: Duration;
  backoffCap?: Duration;
  retention?: Duration;
  failedRetention?: Duration;
  maxRunning?: number;
  maxRunningPerKey?: number;
  fair?: boolean;
}

export interface CreateQueueOptions extends QueueOptions {
  /** Return false instead of raising 42710 when the queue exists. */
  ifNotExists?: boolean;
}

export interface ScheduleOptions {
  payload?: unknown;
  /** IANA zone the cron fields are read in (default 'UTC'). */
  timezone?: string;
  priority?: number;
  maxAttempts?: number;
  /** 'one' (default), 'all' or 'none': what a missed slot gives (docs/schedules.md). */
  catchUp?: 'one' | 'all' | 'none';
  enabled?: boolean;
}

export interface Schedule {
  name: string;
  cron: string;
  timezone: string;
  queue: string;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastJobId: number | null;
  enabled: boolean;
  catchUp: string;
  priority: number;
  maxAttempts: number | null;
  payload: unknown;
  /** Paused with pauseSchedule: no next run, fires nothing until resumed. */
  paused: boolean;
}

export interface BulkOptions {
  /** retryJobs: 'failed' and/or 'cancelled' (default failed); cancelJobs: 'ready' and/or 'running' (default ready). */
  states?: string[];
  /** retryJobs: finished before; cancelJobs: created before. */
  before?: Date | string;
  /** At most this many (default: all). */
  maxJobs?: number;
}

/** A job as the queue_jobs view shows it. */
export interface JobInfo<Payload = unknown> {
  id: number;
  queue: string;
  state: string;
  priority: number;
  attempt: number;
  maxAttempts: number;
  runAt: Date;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  leaseExpiresAt: Date | null;
  worker: string | null;
  dedupKey: string | null;
  lastError: string | null;
  payload: Payload;
  result: unknown;
  concurrencyKey: string | null;
}

export interface DeadLetterOptions {
  /** 'failed' (default) or 'cancelled'. */
  state?: 'failed' | 'cancelled';
  /** Page size (default 100). */
  limit?: number;
  /** The `next` of the previous page. */
  after?: DeadLetterCursor;
}

/** Where a page of dead letters ended: newest first, by (finished_at, id). */
export interface DeadLetterCursor {
  finishedAt: string;
  id: number;
}

export interface DeadLetterPage<Payload = unknown> {
  jobs: JobInfo<Payload>[];
  /** Pass as `after` for the next page; null on the last one. */
  next: DeadLetterCursor | null;
}

/** queue_stats: counts by state, read now. */
export interface QueueStats {
  queue: string;
  ready: number;
  scheduled: number;
  running: number;
  done: number;
  failed: number;
  cancelled: number;
  /** Seconds the oldest due job has waited; null when none is due. */
  oldestReadyAgeSeconds: number | null;
  expiredLeases: number;
  paused: boolean;
}

/** queue_metrics: totals and gauges kept in shared memory (docs/metrics.md). */
export type QueueMetrics = Record<string, number | string | Date | null> & { queue: string };

export interface ClaimQueueOptions {
  /** Your pg.Pool; the ClaimQueue never ends it. */
  pool?: PoolLike;
  /** Or a connection string: a pg.Pool is made (pg must be installed) and end() closes it. */
  connectionString?: string;
}

function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function camelRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[camel(key)] = value;
  return out;
}

function jobInfo<Payload>(row: any): JobInfo<Payload> {
  const job = camelRow(row) as unknown as JobInfo<Payload>;
  job.id = jobId(row.id);
  return job;
}

function count(value: unknown): number {
  return Number(value ?? 0);
}

export class ClaimQueue {
  readonly pool: PoolLike;
  private readonly ownsPool: boolean;

  constructor(options: ClaimQueueOptions) {
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else if (options.connectionString) {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const pg = require('pg') as { Pool: new (config: { connectionString: string }) => PoolLike };
      this.pool = new pg.Pool({ connectionString: options.connectionString });
      this.ownsPool = true;
    } else {
      throw new TypeError('ClaimQueue needs { pool } or { connectionString }');
    }
  }

  /** The extension's schema and version; checks the version against this client's range. */
  connect(): Promise<ExtensionInfo> {
    return extensionOf(this.pool);
  }

  /** Closes the pool if this ClaimQueue made it. */
  async end(): Promise<void> {
    if (this.ownsPool) await (this.pool as unknown as { end(): Promise<void> }).end();
  }

  // A call of function `fn` with positional then named arguments; nulls and undefined are left out.
  private async call(fn: string, positional: unknown[], named: [string, unknown, string][] = []): Promise<any[]> {
    try {
      const { q } = await extensionOf(this.pool);
      const values: unknown[] = [...positional];
      const parts = positional.map((_, i) => `$${i + 1}`);
      for (const [name, value, cast] of named) {
        if (value === undefined) continue;
        if (cast === 'duration') {
          values.push(typeof value === 'number' ? value / 1000 : value);
          parts.push(typeof value === 'number'
            ? `${name} => make_interval(secs => $${values.length}::float8)`
            : `${name} => $${values.length}::interval`);
        } else {
          values.push(value);
          parts.push(`${name} => $${values.length}::${cast}`);
        }
      }
      const { rows } = await this.pool.query(`SELECT ${q(fn)}(${parts.join(', ')}) AS r`, values);
      return rows;
    } catch (err) {
      throw toClaimQueueError(err);
    }
  }

  private async view(sql: (q: (name: string) => string) => string, values: unknown[] = []): Promise<any[]> {
    try {
      const { q } = await extensionOf(this.pool);
      const { rows } = await this.pool.query(sql(q), values);
      return rows;
    } catch (err) {
      throw toClaimQueueError(err);
    }
  }

  private static queueArguments(options: QueueOptions): [string, unknown, string][] {
    return [
      ['lease', options.lease, 'duration'],
      ['max_attempts', options.maxAttempts, 'int'],
      ['backoff_base', options.backoffBase, 'duration'],
      ['backoff_cap', options.backoffCap, 'duration'],
      ['retention', options.retention, 'duration'],
      ['failed_retention', options.failedRetention, 'duration'],
      ['max_running', options.maxRunning, 'int'],
      ['max_running_per_key', options.maxRunningPerKey, 'int'],
      ['fair', options.fair, 'boolean'],
    ];
  }

  // --- queues ---------------------------------------------------------------------

  /** create_queue: true if created, false with ifNotExists when it exists. */
  async createQueue(name: string, options: CreateQueueOptions = {}): Promise<boolean> {
    const rows = await this.call('create_queue', [name], [
      ...ClaimQueue.queueArguments(options), ['if_not_exists', options.ifNotExists, 'boolean']]);
    return rows[0].r;
  }

  /** alter_queue: only the settings given change; a limit of 0 removes it. */
  async alterQueue(name: string, options: QueueOptions): Promise<void> {
    await this.call('alter_queue', [name], ClaimQueue.queueArguments(options));
  }

  /** drop_queue: returns the jobs deleted; without force a queue with ready or running jobs is 55006. */
  async dropQueue(name: string, options: { force?: boolean } = {}): Promise<number> {
    const rows = await this.call('drop_queue', [name], [['force', options.force, 'boolean']]);
    return count(rows[0].r);
  }

  /** pause_queue: true if it was running. */
  async pauseQueue(name: string): Promise<boolean> {
    return (await this.call('pause_queue', [name], []))[0].r;
  }

  /** resume_queue: true if it was paused. */
  async resumeQueue(name: string): Promise<boolean> {
    return (await this.call('resume_queue', [name], []))[0].r;
  }

  /** Each queue's settings (queue_settings), by name. */
  async queues(): Promise<Record<string, unknown>[]> {
    const rows = await this.view((q) => `SELECT * FROM ${q('queue_settings')} ORDER BY queue`);
    return rows.map(camelRow);
  }

  // --- schedules ------------------------------------------------------------------

  /** schedule: creates or replaces a recurring job; returns its next run. */
  async schedule(name: string, cron: string, queue: string, options: ScheduleOptions = {}): Promise<Date> {
    const rows = await this.call('schedule', [name, cron, queue], [
      ['payload', options.payload === undefined ? undefined : JSON.stringify(options.payload), 'jsonb'],
      ['timezone', options.timezone, 'text'],
      ['priority', options.priority, 'int'],
      ['max_attempts', options.maxAttempts, 'int'],
      ['catch_up', options.catchUp, 'text'],
      ['enabled', options.enabled, 'boolean'],
    ]);
    return new Date(rows[0].r);
  }

  /** unschedule: QC006 when there is no such schedule. */
  async unschedule(name: string): Promise<void> {
    await this.call('unschedule', [name]);
  }

  /** pause_schedule: the schedule fires nothing until resumed; true if it was running. */
  async pauseSchedule(name: string): Promise<boolean> {
    return (await this.call('pause_schedule', [name], []))[0].r;
  }

  /** resume_schedule: it fires again from its first slot after now (no missed slots); true if it was paused. */
  async resumeSchedule(name: string): Promise<boolean> {
    return (await this.call('resume_schedule', [name], []))[0].r;
  }

  /** The schedules of the queues this role may see. */
  async schedules(): Promise<Schedule[]> {
    const rows = await this.view((q) => `SELECT * FROM ${q('schedules')} ORDER BY name`);
    return rows.map((row) => {
      const s = camelRow(row) as unknown as Schedule;
      s.lastJobId = row.last_job_id == null ? null : jobId(row.last_job_id);
      return s;
    });
  }

  // --- retry and cancel -----------------------------------------------------------

  /** retry: a failed or cancelled job back to ready (at runAt) with one more attempt. */
  async retry(id: number, options: { runAt?: Date | string } = {}): Promise<void> {
    await this.call('retry', [id], [['run_at', options.runAt, 'timestamptz']]);
  }

  /** cancel: a ready or running job to cancelled. */
  async cancel(id: number): Promise<void> {
    await this.call('cancel', [id]);
  }

  /** retry_jobs: the queue's dead letters back to ready; returns how many. */
  async retryJobs(queue: string, options: BulkOptions = {}): Promise<number> {
    const rows = await this.call('retry_jobs', [queue], [
      ['states', options.states, 'text[]'],
      ['finished_before', options.before, 'timestamptz'],
      ['max_jobs', options.maxJobs, 'int'],
    ]);
    return count(rows[0].r);
  }

  /** cancel_jobs: the queue's ready (or running) jobs cancelled; returns how many. */
  async cancelJobs(queue: string, options: BulkOptions = {}): Promise<number> {
    const rows = await this.call('cancel_jobs', [queue], [
      ['states', options.states, 'text[]'],
      ['created_before', options.before, 'timestamptz'],
      ['max_jobs', options.maxJobs, 'int'],
    ]);
    return count(rows[0].r);
  }

  /**
   * Dead letters: the queue's failed (or cancelled) jobs, newest first, a page at a time
   * (keyset pagination on finished_at and id, so pages stay cheap however deep).
   */
  async deadLetters<Payload = unknown>(queue: string, options: DeadLetterOptions = {}): Promise<DeadLetterPage<Payload>> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new RangeError('limit must be from 1 to 10000');
    const after = options.after;
    const rows = await this.view((q) =>
      `SELECT *, finished_at::text AS finished_key FROM ${q('queue_jobs')}
        WHERE queue = $1 AND state = $2
          AND ($3::timestamptz IS NULL OR (finished_at, id) < ($3::timestamptz, $4::bigint))
        ORDER BY finished_at DESC, id DESC
        LIMIT $5`,
      [queue, options.state ?? 'failed', after?.finishedAt ?? null, after?.id ?? null, limit]);
    const jobs = rows.map((row) => {
      const { finished_key: _, ...rest } = row;
      return jobInfo<Payload>(rest);
    });
    const last = rows[rows.length - 1];
    return { jobs, next: rows.length === limit ? { finishedAt: last.finished_key, id: jobId(last.id) } : null };
  }

  /** One job as queue_jobs shows it; null when it does not exist or this role may not see it. */
  async job<Payload = unknown>(id: number): Promise<JobInfo<Payload> | null> {
    const rows = await this.view((q) => `SELECT * FROM ${q('queue_jobs')} WHERE id = $1`, [id]);
    return rows.length ? jobInfo<Payload>(rows[0]) : null;
  }

  // --- status, results, errors ------------------------------------------------------

  jobStatus<Result = unknown>(ids: number[]): Promise<JobStatus<Result>[]> {
    return jobStatus<Result>(this.pool, ids);
  }

  /** The job's result, null until complete() stored one (or for a job not visible). */
  async result<Result = unknown>(id: number): Promise<Result | null> {
    return (await jobStatus<Result>(this.pool, [id]))[0]?.result ?? null;
  }

  awaitJobs<Result = unknown>(ids: number[], options: AwaitJobsOptions = {}): Promise<JobStatus<Result>[]> {
    return awaitJobs<Result>(this.pool, ids, options);
  }

  jobErrors(id: number): Promise<JobError[]> {
    return jobErrors(this.pool, id);
  }

  // --- metrics ------------------------------------------------------------------------

  /** queue_stats: counts by state, one row per visible queue. */
  async queueStats(): Promise<QueueStats[]> {
    const rows = await this.view((q) =>
      `SELECT *, extract(epoch FROM oldest_ready_age)::float8 AS oldest_ready_age_seconds
         FROM ${q('queue_stats')} ORDER BY queue`);
    return rows.map((row) => ({
      queue: row.queue,
      ready: count(row.ready),
      scheduled: count(row.scheduled),
      running: count(row.running),
      done: count(row.done),
      failed: count(row.failed),
      cancelled: count(row.cancelled),
      oldestReadyAgeSeconds: row.oldest_ready_age_seconds ?? null,
      expiredLeases: count(row.expired_leases),
      paused: row.paused,
    }));
  }

  /** queue_metrics: totals since the counters started and gauges, camelCased, bigints as numbers. */
  async queueMetrics(): Promise<QueueMetrics[]> {
    const rows = await this.view((q) => `SELECT * FROM ${q('queue_metrics')} ORDER BY queue`);
    return rows.map((row) => {
      const out = camelRow(row);
      for (const [key, value] of Object.entries(out)) {
        if (typeof value === 'string' && /^\d+$/.test(value) && key !== 'queue') out[key] = Number(value);
      }
      return out as QueueMetrics;
    });
  }

  // --- enqueueing -----------------------------------------------------------------------

  enqueue<Payload = unknown>(queue: string, payload: Payload, options: EnqueueOptions = {}): Promise<number> {
    return enqueue(this.pool, queue, payload, options);
  }

  /**
   * Many jobs in one statement, each with options of its own (dedupKey included): pass
   * BatchJob objects. Payloads alone, with one set of options for all, go through
   * enqueue_batch (a plain array of payloads and `options`).
   */
  enqueueBatch<Payload = unknown>(queue: string, jobs: BatchJob<Payload>[]): Promise<number[]>;
  enqueueBatch(queue: string, payloads: unknown[], options: EnqueueBatchOptions): Promise<number[]>;
  enqueueBatch(queue: string, jobs: unknown[], options?: EnqueueBatchOptions): Promise<number[]> {
    if (options !== undefined) return enqueueBatch(this.pool, queue, jobs, options);
    return enqueueMany(this.pool, queue, jobs as BatchJob[]);
  }
}
