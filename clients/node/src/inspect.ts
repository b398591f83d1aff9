// Read-side queries for operators (the dashboard and the command line): what
// each queue holds and did, pages of jobs, one job's attempts, dead letters,
// schedules, running claims, the reapers and advisory locks. Every call is
// qualified with the extension's schema (found in pg_extension), and every page
// of jobs is read by keyset on an index of claimqueue.jobs whose first column is
// the queue: no page scans the table, none uses OFFSET (test: inspect.test.mjs
// EXPLAINs each one).

import type { JobInfo, Schedule } from './admin';
import type { Queryable } from './types';

export type JobState = 'ready' | 'scheduled' | 'running' | 'done' | 'failed' | 'cancelled';
export const JOB_STATES: readonly JobState[] = ['ready', 'scheduled', 'running', 'done', 'failed', 'cancelled'];

/** One queue on the overview: queue_metrics and the queue's settings (no job row read). */
export interface QueueOverview {
  queue: string;
  queueId: number;
  paused: boolean;
  enqueued: number;
  claimed: number;
  completed: number;
  failed: number;
  reaped: number;
  retried: number;
  cancelled: number;
  /** Ready jobs, delayed ones included; null until the reaper first counted the queue. */
  readyOrScheduled: number | null;
  running: number | null;
  /** Seconds the oldest ready job has waited; null: none ready. */
  oldestReadyAge: number | null;
  maxRunning: number | null;
  maxRunningPerKey: number | null;
  fair: boolean;
  countersSince: Date | null;
  /** Whether the caller may pause, retry and cancel here (the server decides at each call). */
  canManage: boolean;
}

export interface HistoryPoint {
  queue: string;
  sampledAt: Date;
  completed: number | null;
  failed: number | null;
  enqueued: number | null;
  readyOrScheduled: number | null;
  running: number | null;
}

export interface QueueSettings {
  queue: string;
  queueId: number;
  lease: string;
  maxAttempts: number;
  backoffBase: string;
  backoffCap: string;
  retention: string;
  failedRetention: string | null;
  createdAt: Date;
  paused: boolean;
  maxRunning: number | null;
  maxRunningPerKey: number | null;
  fair: boolean;
}

/** A job in a page: the admin API's JobInfo without the payload and result, and whether its claim dies with its session. */
export interface JobRow extends Omit<JobInfo, 'payload' | 'result'> {
  sessionBound: boolean;
}

export interface JobDetail extends JobRow {
  payload: unknown;
  result: unknown;
}

export interface JobAttemptError {
  attempt: number;
  failedAt: Date | null;
  error: string | null;
  detail: unknown;
}

export interface Page<T> {
  rows: T[];
  /** Pass as `after` for the next page; null on the last one. */
  next: string | null;
}

export interface JobFilter {
  queue: string;
  /** Default: every state, newest first. 'scheduled' is ready but not yet due. */
  state?: JobState;
  /** A dedup key or concurrency key. */
  key?: string;
  id?: number;
  after?: string | null;
  limit?: number;
}

export interface DeadLetterFilter {
  queue?: string;
  state?: 'failed' | 'cancelled';
  /** Part of the last error, any case. */
  error?: string;
  after?: string | null;
  limit?: number;
}

/** A schedule as the schedules view shows it: the same row as ClaimQueue.schedules() gives. */
export type ScheduleRow = Schedule;

export interface ReaperRow {
  database: string;
  pid: number | null;
  state: string;
  startedAt: Date | null;
  lastPassAt: Date | null;
  passes: number | null;
  jobsReaped: number | null;
  jobsPurged: number | null;
  lastError: string | null;
}

export interface LockRow {
  namespace: string;
  keyMode: string;
  key: string | null;
  mode: string;
  granted: boolean;
  pid: number;
  applicationName: string | null;
  waitStart: Date | null;
}

/** How many jobs of a page's order a key filter looks through (each page, from its cursor). */
export const KEY_WINDOW = 1000;

const JOB_COLUMNS =
  'id, queue, state, priority, attempt, max_attempts, run_at, created_at, started_at, finished_at,' +
  ' lease_expires_at, worker, dedup_key, concurrency_key, last_error, session_bound';

function num(v: unknown): number {
  return v === null || v === undefined ? 0 : Number(v);
}
function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}
function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}
function decodeCursor(cursor: string | null | undefined, arity: number): unknown[] | null {
  if (!cursor) return null;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new RangeError(`not a page cursor: ${cursor}`);
  }
  if (!Array.isArray(values) || values.length !== arity) throw new RangeError(`not a page cursor: ${cursor}`);
  return values;
}

function jobRow(r: any): JobRow {
  return {
    id: Number(r.id),
    queue: r.queue,
    state: r.state,
    priority: r.priority,
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    runAt: r.run_at,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    leaseExpiresAt: r.lease_expires_at,
    worker: r.worker,
    dedupKey: r.dedup_key,
    concurrencyKey: r.concurrency_key,
    lastError: r.last_error,
    sessionBound: r.session_bound === true,
  };
}

/** The schema the claimqueue extension is installed in; throws if it is not installed. */
export async function extensionSchema(db: Queryable): Promise<string> {
  const { rows } = await db.query(
    `SELECT n.nspname FROM pg_catalog.pg_extension e
       JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
      WHERE e.extname = 'claimqueue'`);
  if (rows.length === 0) throw new Error('the claimqueue extension is not installed in this database');
  return rows[0].nspname;
}

/** A page query: its text and values (exposed so tests can EXPLAIN each). */
export interface PageQuery {
  text: string;
  values: unknown[];
  cursorOf(row: any): unknown[];
}

/**
 * The read side of claimqueue, for operators. Each method is one or two statements on
 * the views the server grants (queue_metrics, queue_history, queue_settings, queue_jobs,
 * schedules, reaper_stats, advisory_locks): a role sees what its grants show it.
 */
export class Inspector {
  private schemaName: string | null;
  private doneBound: Promise<boolean> | null = null;
  private allReaperStats: Promise<boolean> | null = null;
  private jobErrorsFn: Promise<boolean> | null = null;

  constructor(private readonly db: Queryable, options: { schema?: string } = {}) {
    this.schemaName = options.schema ?? null;
  }

  /** The extension's schema, looked up once. */
  async schema(): Promise<string> {
    if (this.schemaName === null) this.schemaName = await extensionSchema(this.db);
    return this.schemaName;
  }

  private async q(): Promise<string> {
    return quoteIdent(await this.schema());
  }

  /** Whether queue_metrics has done_id_bound (0.5.0 on), looked up once. */
  private hasDoneBound(): Promise<boolean> {
    if (this.doneBound === null) {
      this.doneBound = this.schema().then(async (schema) => {
        const { rows } = await this.db.query(
          `SELECT 1 FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relname = 'queue_metrics' AND a.attname = 'done_id_bound'
              AND NOT a.attisdropped`, [schema]);
        return rows.length > 0;
      });
    }
    return this.doneBound;
  }

  /** Every visible queue: depth, totals, oldest ready age, paused, limits, and whether the caller may manage it. */
  async overview(): Promise<QueueOverview[]> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT st.queue, st.queue_id, st.paused, st.max_running, st.max_running_per_key, st.fair,
              m.enqueued, m.claimed, m.completed, m.failed, m.reaped, m.retried, m.cancelled,
              CASE WHEN m.gauges_since IS NOT NULL THEN m.ready_or_scheduled END AS ready_or_scheduled,
              CASE WHEN m.gauges_since IS NOT NULL THEN m.running END AS running,
              extract(epoch FROM m.oldest_ready_age)::float8 AS oldest_ready_age, m.counters_since
         FROM ${s}.queue_settings st
         LEFT JOIN ${s}.queue_metrics m ON m.queue = st.queue
        ORDER BY st.queue`);
    const manage = await this.manageable(rows.map((r) => r.queue));
    return rows.map((r) => ({
      queue: r.queue,
      queueId: r.queue_id,
      paused: r.paused,
      enqueued: num(r.enqueued),
      claimed: num(r.claimed),
      completed: num(r.completed),
      failed: num(r.failed),
      reaped: num(r.reaped),
      retried: num(r.retried),
      cancelled: num(r.cancelled),
      readyOrScheduled: numOrNull(r.ready_or_scheduled),
      running: numOrNull(r.running),
      oldestReadyAge: r.oldest_ready_age === null ? null : Number(r.oldest_ready_age),
      maxRunning: r.max_running,
      maxRunningPerKey: r.max_running_per_key,
      fair: r.fair,
      countersSince: r.counters_since,
      canManage: manage.has(r.queue),
    }));
  }

  /**
   * The queues among `queues` the caller may manage: EXECUTE on retry() and the queue's
   * manage privilege (or claimqueue_admin, a superuser, the extension's owner). A hint for
   * what to offer; the server checks again at each call.
   */
  async manageable(queues: string[]): Promise<Set<string>> {
    if (queues.length === 0) return new Set();
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT q.name FROM unnest($1::text[]) q(name)
        WHERE pg_catalog.has_function_privilege(
                '${s.replace(/'/g, "''")}.retry(bigint, timestamptz)', 'EXECUTE')
          AND (EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = current_user AND r.rolsuper)
               OR pg_catalog.pg_has_role('claimqueue_admin', 'USAGE')
               OR EXISTS (SELECT 1 FROM pg_catalog.pg_extension e
                           WHERE e.extname = 'claimqueue' AND pg_catalog.pg_has_role(e.extowner, 'USAGE'))
               OR EXISTS (SELECT 1 FROM ${s}.queue_privileges p
                           WHERE p.queue = q.name AND p.privilege = 'manage'
                             AND (p.grantee = 'PUBLIC' OR pg_catalog.pg_has_role(p.grantee::regrole, 'USAGE'))))`,
      [queues]);
    return new Set(rows.map((r) => r.name));
  }

  /** queue_history over the last `minutes` (default 60): per-sample deltas for a throughput chart. */
  async history(minutes = 60): Promise<HistoryPoint[]> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT queue, sampled_at, completed_delta, failed_delta, enqueued_delta, ready_or_scheduled, running
         FROM ${s}.queue_history
        WHERE sampled_at > pg_catalog.now() - pg_catalog.make_interval(mins => $1)
        ORDER BY queue, sampled_at`, [minutes]);
    return rows.map((r) => ({
      queue: r.queue,
      sampledAt: r.sampled_at,
      completed: numOrNull(r.completed_delta),
      failed: numOrNull(r.failed_delta),
      enqueued: numOrNull(r.enqueued_delta),
      readyOrScheduled: numOrNull(r.ready_or_scheduled),
      running: numOrNull(r.running),
    }));
  }

  /** One queue's settings; null if it does not exist or the caller holds no privilege on it. */
  async queue(name: string): Promise<QueueSettings | null> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT queue, queue_id, lease::text, max_attempts, backoff_base::text, backoff_cap::text,
              retention::text, failed_retention::text, created_at, paused, max_running,
              max_running_per_key, fair
         FROM ${s}.queue_settings WHERE queue = $1`, [name]);
    if (rows.length === 0) return null;
    const r = rows[0];
    return {
      queue: r.queue, queueId: r.queue_id, lease: r.lease, maxAttempts: r.max_attempts,
      backoffBase: r.backoff_base, backoffCap: r.backoff_cap, retention: r.retention,
      failedRetention: r.failed_retention, createdAt: r.created_at, paused: r.paused,
      maxRunning: r.max_running, maxRunningPerKey: r.max_running_per_key, fair: r.fair,
    };
  }

  /**
   * The statement behind jobs(): the queue's id first (so every index can be entered by
   * it), then one keyset order per state, each the order of an index:
   * ready: jobs_ready_idx (priority, position); scheduled: jobs_scheduled_idx (run_at);
   * running: jobs_running_idx (lease end); failed, cancelled: jobs_dead_letters_idx
   * (finished_at, newest first); done and every state: the primary key, newest first.
   * The first page of done jobs starts its walk at queue_metrics.done_id_bound (no done job
   * of the queue has a greater id), past the live jobs above it; while the bound is NULL
   * (not counted yet after a start) it starts at the newest job. `doneBound: false` leaves
   * the bound out (the same rows: a test compares them).
   */
  async jobsQuery(filter: JobFilter, queueId: number,
                  options: { doneBound?: boolean } = {}): Promise<PageQuery> {
    const s = await this.q();
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    const values: unknown[] = [queueId];
    const where = ['queue_id = $1'];
    if (filter.id !== undefined) {
      values.push(filter.id);
      where.push(`id = $${values.length}`);
    }
    const state = filter.state;
    let order: string;
    let cursorOf: (row: any) => unknown[];
    let arity: number;
    let readyAfter: [string, string] | null = null;
    const add = (v: unknown) => { values.push(v); return `$${values.length}`; };
    switch (state) {
      case 'ready': {
        where.push("state = 'ready'", 'claim_position IS NOT NULL');
        arity = 2;
        const c = decodeCursor(filter.after, arity);
        if (c) {
          // The next entries of this priority, then the lower priorities: two ranges of
          // jobs_ready_idx, each entered at its start (an OR would filter from the top).
          readyAfter = [add(c[0]), add(c[1])];
        }
        order = 'priority DESC, claim_position';
        cursorOf = (r) => [r.priority, String(r.claim_position)];
        break;
      }
      case 'scheduled':
        where.push("state = 'ready'", 'claim_position IS NULL');
        arity = 2;
        {
          const c = decodeCursor(filter.after, arity);
          if (c) where.push(`(run_at, id) > (${add(c[0])}::timestamptz, ${add(c[1])}::bigint)`);
        }
        order = 'run_at, id';
        cursorOf = (r) => [r.run_at.toISOString(), String(r.id)];
        break;
      case 'running':
        where.push("state = 'running'", 'lease_expires_at IS NOT NULL');
        arity = 2;
        {
          const c = decodeCursor(filter.after, arity);
          if (c) where.push(`(lease_expires_at, id) > (${add(c[0])}::timestamptz, ${add(c[1])}::bigint)`);
        }
        order = 'lease_expires_at, id';
        cursorOf = (r) => [r.lease_expires_at.toISOString(), String(r.id)];
        break;
      case 'failed':
      case 'cancelled':
        where.push(`state = '${state}'`);
        arity = 2;
        {
          const c = decodeCursor(filter.after, arity);
          if (c) where.push(`(finished_at, id) < (${add(c[0])}::timestamptz, ${add(c[1])}::bigint)`);
        }
        order = 'finished_at DESC, id DESC';
        cursorOf = (r) => [r.finished_at.toISOString(), String(r.id)];
        break;
      default:
        if (state === 'done') where.push("state = 'done'");
        else if (state !== undefined) throw new RangeError(`no such job state: ${state}`);
        arity = 1;
        {
          const c = decodeCursor(filter.after, arity);
          if (c) where.push(`id < ${add(c[0])}::bigint`);
          else if (state === 'done' && options.doneBound !== false && await this.hasDoneBound()) {
            where.push(`id <= coalesce((SELECT m.done_id_bound FROM ${s}.queue_metrics m
                                         WHERE m.queue = ${add(filter.queue)}::text),
                                        9223372036854775807)`);
          }
        }
        order = 'id DESC';
        cursorOf = (r) => [String(r.id)];
    }
    const cols = `${JOB_COLUMNS}, claim_position`;
    const base = where.join(' AND ');
    const pageSql = (lim: string): string => {
      if (readyAfter === null) {
        return `SELECT ${cols} FROM ${s}.queue_jobs WHERE ${base} ORDER BY ${order} LIMIT ${lim}`;
      }
      const [p, pos] = readyAfter;
      return `SELECT u.* FROM (
                (SELECT ${cols} FROM ${s}.queue_jobs
                  WHERE ${base} AND priority = ${p}::smallint AND claim_position > ${pos}::bigint
                  ORDER BY claim_position LIMIT ${lim})
                UNION ALL
                (SELECT ${cols} FROM ${s}.queue_jobs
                  WHERE ${base} AND priority < ${p}::smallint
                  ORDER BY priority DESC, claim_position LIMIT ${lim})) u
              ORDER BY u.priority DESC, u.claim_position LIMIT ${lim}`;
    };
    let text: string;
    if (filter.key !== undefined && filter.key !== '') {
      // A key's jobs that an index holds by key are looked up there, wherever they are in
      // the page's order: the live job of a dedup key (jobs_dedup_idx, at most one) and the
      // running jobs of a concurrency key (jobs_running_key_idx). The others (finished jobs,
      // ready ones by concurrency key) have no index by key: they are looked for among the
      // next KEY_WINDOW jobs of the page's order, read by the page's index, so a key of few
      // jobs never turns a page into a scan of the table. The two parts share no job.
      values.push(filter.key);
      const key = `$${values.length}`;
      const indexed = `((dedup_key = ${key} AND state IN ('ready', 'running'))
                        OR (concurrency_key = ${key} AND state = 'running'))`;
      const parts: string[] = [];
      if (state === undefined || state === 'ready' || state === 'scheduled' || state === 'running') {
        let after = '';
        if (readyAfter !== null) {
          const [p, pos] = readyAfter;
          after = ` AND (priority < ${p}::smallint OR (priority = ${p}::smallint AND claim_position > ${pos}::bigint))`;
        }
        parts.push(`(SELECT ${cols} FROM ${s}.queue_jobs WHERE ${base}${after} AND ${indexed})`);
      }
      values.push(KEY_WINDOW);
      const windowParam = `$${values.length}`;
      const unindexed = indexed.replace(/\b(dedup_key|concurrency_key|state)\b/g, 'w.$1');
      parts.push(`(SELECT w.* FROM (${pageSql(windowParam)}) w
                   WHERE (w.dedup_key = ${key} OR w.concurrency_key = ${key}) AND ${unindexed} IS NOT TRUE)`);
      values.push(limit + 1);
      const outerOrder = order.replace(/\b(priority|claim_position|run_at|lease_expires_at|finished_at|id)\b/g, 'u.$1');
      text = `SELECT u.* FROM (${parts.join(' UNION ALL ')}) u ORDER BY ${outerOrder} LIMIT $${values.length}`;
    } else {
      values.push(limit + 1);
      text = pageSql(`$${values.length}`);
    }
    return { text, values, cursorOf };
  }

  /** A page of one queue's jobs; throws RangeError for a queue the caller cannot see. */
  async jobs(filter: JobFilter, known?: QueueSettings): Promise<Page<JobRow>> {
    // A page that has just read the queue's settings passes them: one statement less.
    const settings = known?.queue === filter.queue ? known : await this.queue(filter.queue);
    if (settings === null) throw new RangeError(`no such queue: ${filter.queue}`);
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    const q = await this.jobsQuery(filter, settings.queueId);
    const { rows } = await this.db.query(q.text, q.values);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return { rows: page.map(jobRow), next: more ? encodeCursor(q.cursorOf(page[page.length - 1])) : null };
  }

  /** One job with payload and result; null if it does not exist or is not visible. */
  async job(id: number): Promise<JobDetail | null> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT ${JOB_COLUMNS}, payload, result FROM ${s}.queue_jobs WHERE id = $1`, [id]);
    if (rows.length === 0) return null;
    return { ...jobRow(rows[0]), payload: rows[0].payload, result: rows[0].result };
  }

  /**
   * Each attempt's error: job_errors(id) where the server has it; otherwise the last error
   * alone, as the job's latest attempt.
   */
  async jobErrors(id: number): Promise<JobAttemptError[]> {
    const s = await this.q();
    if (await this.hasJobErrors()) {
      const { rows } = await this.db.query(
        `SELECT attempt, failed_at, error, detail FROM ${s}.job_errors($1::bigint) ORDER BY attempt`, [id]);
      return rows.map((r) => ({ attempt: r.attempt, failedAt: r.failed_at, error: r.error, detail: r.detail }));
    }
    const { rows } = await this.db.query(
      `SELECT attempt, finished_at, last_error FROM ${s}.queue_jobs WHERE id = $1 AND last_error IS NOT NULL`, [id]);
    return rows.map((r) => ({ attempt: r.attempt, failedAt: r.finished_at, error: r.last_error, detail: null }));
  }

  /** The statement behind deadLetters(): per queue, jobs_dead_letters_idx newest first. */
  async deadLettersQuery(filter: DeadLetterFilter): Promise<PageQuery> {
    const s = await this.q();
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    const values: unknown[] = [];
    const add = (v: unknown) => { values.push(v); return `$${values.length}`; };
    const states = filter.state ? [filter.state] : ['failed', 'cancelled'];
    // One ordered range of jobs_dead_letters_idx per queue and state, merged: a state list
    // (state = ANY) would read the queue's dead letters whole to sort them.
    const statesParam = add(states);
    // (The constant list lets the planner see that the partial index covers these rows.)
    const inner = [`j.queue_id = st.queue_id`, `j.state = ds.state`, `j.state IN ('failed', 'cancelled')`];
    if (filter.error) inner.push(`j.last_error ILIKE '%' || ${add(filter.error.replace(/[\\%_]/g, (m) => '\\' + m))} || '%'`);
    const c = decodeCursor(filter.after, 2);
    if (c) inner.push(`(j.finished_at, j.id) < (${add(c[0])}::timestamptz, ${add(c[1])}::bigint)`);
    const outer = filter.queue ? `WHERE st.queue = ${add(filter.queue)}` : '';
    const lim = add(limit + 1);
    const text =
      `SELECT d.* FROM ${s}.queue_settings st
         CROSS JOIN unnest(${statesParam}::text[]) AS ds(state)
         CROSS JOIN LATERAL (
           SELECT ${JOB_COLUMNS.split(', ').map((c) => 'j.' + c.trim()).join(', ')}
             FROM ${s}.queue_jobs j WHERE ${inner.join(' AND ')}
            ORDER BY j.finished_at DESC, j.id DESC LIMIT ${lim}) d
         ${outer}
        ORDER BY d.finished_at DESC, d.id DESC LIMIT ${lim}`;
    return { text, values, cursorOf: (r) => [r.finished_at.toISOString(), String(r.id)] };
  }

  /** Failed and cancelled jobs, newest first, of one queue or all visible ones. */
  async deadLetters(filter: DeadLetterFilter = {}): Promise<Page<JobRow>> {
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    const q = await this.deadLettersQuery(filter);
    const { rows } = await this.db.query(q.text, q.values);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return { rows: page.map(jobRow), next: more ? encodeCursor(q.cursorOf(page[page.length - 1])) : null };
  }

  /** The statement behind claims(): per queue, jobs_running_idx by lease end. */
  async claimsQuery(options: { queue?: string; after?: string | null; limit?: number }): Promise<PageQuery> {
    const s = await this.q();
    const limit = Math.min(Math.max(options.limit ?? 100, 1), 500);
    const values: unknown[] = [];
    const add = (v: unknown) => { values.push(v); return `$${values.length}`; };
    const inner = ['j.queue_id = st.queue_id', "j.state = 'running'", 'j.lease_expires_at IS NOT NULL'];
    const c = decodeCursor(options.after, 2);
    if (c) inner.push(`(j.lease_expires_at, j.id) > (${add(c[0])}::timestamptz, ${add(c[1])}::bigint)`);
    const outer = options.queue ? `WHERE st.queue = ${add(options.queue)}` : '';
    const lim = add(limit + 1);
    const text =
      `SELECT d.* FROM ${s}.queue_settings st
         CROSS JOIN LATERAL (
           SELECT ${JOB_COLUMNS.split(', ').map((c) => 'j.' + c.trim()).join(', ')}
             FROM ${s}.queue_jobs j WHERE ${inner.join(' AND ')}
            ORDER BY j.lease_expires_at, j.id LIMIT ${lim}) d
         ${outer}
        ORDER BY d.lease_expires_at, d.id LIMIT ${lim}`;
    return { text, values, cursorOf: (r) => [r.lease_expires_at.toISOString(), String(r.id)] };
  }

  /** Running claims, the soonest lease end first: worker, lease end, session-bound. */
  async claims(options: { queue?: string; after?: string | null; limit?: number } = {}): Promise<Page<JobRow>> {
    const limit = Math.min(Math.max(options.limit ?? 100, 1), 500);
    const q = await this.claimsQuery(options);
    const { rows } = await this.db.query(q.text, q.values);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return { rows: page.map(jobRow), next: more ? encodeCursor(q.cursorOf(page[page.length - 1])) : null };
  }

  async schedules(queue?: string): Promise<ScheduleRow[]> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT name, queue, cron, timezone, next_run_at, last_run_at, last_job_id, enabled, catch_up,
              priority, max_attempts, payload, paused
         FROM ${s}.schedules WHERE $1::text IS NULL OR queue = $1 ORDER BY name`, [queue ?? null]);
    return rows.map((r) => ({
      name: r.name, queue: r.queue, cron: r.cron, timezone: r.timezone, nextRunAt: r.next_run_at,
      lastRunAt: r.last_run_at, lastJobId: numOrNull(r.last_job_id), enabled: r.enabled,
      catchUp: r.catch_up, priority: r.priority, maxAttempts: r.max_attempts, payload: r.payload,
      paused: r.paused,
    }));
  }

  /**
   * The reapers: this database's from reaper_stats, and every other database's from
   * all_reaper_stats (0.5.0: the launcher's slots in shared memory, their start, passes,
   * counters and last error shown to a role with pg_read_all_stats only, as pg_stat_activity
   * shows other roles' sessions); before 0.5.0, the other databases' reaper processes that
   * pg_stat_activity shows.
   */
  async reapers(): Promise<ReaperRow[]> {
    const s = await this.q();
    const { rows: own } = await this.db.query(
      `SELECT current_database() AS database, pid, state, started_at, last_pass_at, passes,
              jobs_reaped, jobs_purged, last_error
         FROM ${s}.reaper_stats`);
    const { rows: others } = await this.db.query(await this.hasAllReaperStats()
      ? `SELECT database, pid, state, started_at, last_pass_at, passes, jobs_reaped, jobs_purged, last_error
           FROM ${s}.all_reaper_stats WHERE database <> current_database() ORDER BY database`
      : `SELECT datname AS database, pid, 'running' AS state, backend_start AS started_at,
                NULL AS last_pass_at, NULL AS passes, NULL AS jobs_reaped, NULL AS jobs_purged,
                NULL AS last_error
           FROM pg_catalog.pg_stat_activity
          WHERE backend_type LIKE 'claimqueue reaper%' AND datname IS DISTINCT FROM current_database()
          ORDER BY datname`);
    return [...own, ...others].map((r) => ({
      database: r.database, pid: r.pid, state: r.state, startedAt: r.started_at, lastPassAt: r.last_pass_at,
      passes: numOrNull(r.passes), jobsReaped: numOrNull(r.jobs_reaped), jobsPurged: numOrNull(r.jobs_purged),
      lastError: r.last_error,
    }));
  }

  /** Whether the extension has job_errors() (0.5.0 on), looked up once. */
  private hasJobErrors(): Promise<boolean> {
    if (this.jobErrorsFn === null) {
      this.jobErrorsFn = this.schema().then(async (schema) => {
        const { rows } = await this.db.query(
          `SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = $1 AND p.proname = 'job_errors'`, [schema]);
        return rows.length > 0;
      });
    }
    return this.jobErrorsFn;
  }

  /** Whether the extension has the all_reaper_stats view (0.5.0 on), looked up once. */
  private hasAllReaperStats(): Promise<boolean> {
    if (this.allReaperStats === null) {
      this.allReaperStats = this.schema().then(async (schema) => {
        const { rows } = await this.db.query(
          `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relname = 'all_reaper_stats'`, [schema]);
        return rows.length > 0;
      });
    }
    return this.allReaperStats;
  }

  /** Advisory locks held or awaited in claimqueue's namespaces, by namespace. */
  async locks(): Promise<LockRow[]> {
    const s = await this.q();
    const { rows } = await this.db.query(
      `SELECT namespace, key_mode, key, mode, granted, pid, application_name, waitstart
         FROM ${s}.advisory_locks ORDER BY namespace, key, pid`);
    return rows.map((r) => ({
      namespace: r.namespace, keyMode: r.key_mode, key: r.key, mode: r.mode, granted: r.granted,
      pid: r.pid, applicationName: r.application_name, waitStart: r.waitstart,
    }));
  }
}
