// The worker loop: one waiting connection claims with CALL dequeue_wait, up to
// `concurrency` handlers run the jobs, each running job is heartbeaten, and
// stop() (or SIGTERM) drains without leaving a claimed job behind.

import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { jobId } from './enqueue';
import { ClaimQueueError, StaleClaimError, toClaimQueueError } from './errors';
import { extensionOf } from './schema';
import type { FailOutcome, Job, JobRecord, Logger, PoolClientLike, PoolLike } from './types';
import { JobFailure, JobSnooze, JobTimeoutError, errorDetail } from './outcomes';
import { otelMiddleware } from './tracing';

/** Wraps the handler (and the middleware after it): call next() to run them, return what it returns. */
export type Middleware<Payload = unknown> = (job: Job<Payload>, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * Runs one job. What it returns (unless undefined) is stored as the job's result by
 * complete(id, attempt, result), read back with jobStatus() or awaitJobs(); it must be
 * JSON-serialisable, or the attempt fails (as if the handler threw) with an error saying so.
 */
export type Handler<Payload = unknown> = (job: Job<Payload>) => unknown | Promise<unknown>;

export interface WorkerOptions<Payload = unknown> {
  pool: PoolLike;
  queue: string;
  handler: Handler<Payload>;
  /** Handlers running at once (default 1). The pool needs concurrency + 2 connections. */
  concurrency?: number;
  /** Lease of each claim in milliseconds (default: the queue's). Heartbeats run at a third of it. */
  lease?: number;
  /** The worker name recorded on its claims; must be unique (default host:pid:random). */
  name?: string;
  /** Longest single dequeue_wait in milliseconds (default 30 s); stop() interrupts it anyway. */
  wait?: number;
  /** stop(): how long running handlers may finish before their jobs are handed back (ms, default 30 s). */
  grace?: number;
  /** Signals that call stop() (default SIGTERM and SIGINT); [] to handle none. */
  stopSignals?: NodeJS.Signals[];
  /** Where the worker logs (default console); null for silence. Events are emitted either way. */
  logger?: Logger | null;
  /** Pause after a failed claim or connection error before trying again (ms, default 1000). */
  retryDelay?: number;
  /**
   * Per-job timeout in ms (default none). At its end the job's signal aborts with a
   * JobTimeoutError; a handler that has not returned `timeoutGrace` ms later is left behind:
   * its job is failed (onTimeout 'fail', the default: an attempt spent, retried after the
   * backoff) or handed back with snooze (onTimeout 'handBack': no attempt spent), and its
   * slot is free for the next job. Whatever the abandoned handler does later is ignored.
   */
  timeout?: number;
  /** How long after the timeout's abort a handler may still finish (ms, default 5000). */
  timeoutGrace?: number;
  onTimeout?: 'fail' | 'handBack';
  /** Run around the handler, first = outermost (logging, tracing, context). */
  middleware?: Middleware<Payload>[];
  /**
   * A span per job through @opentelemetry/api when it is installed (an optional peer
   * dependency): "claimqueue.job <queue>", with the job's id, attempt and queue (default true).
   */
  tracing?: boolean;
  /**
   * Claim with release_on_disconnect (default false): the claims belong to the worker's
   * waiting connection, and when that session ends (the process crashed, the connection
   * was killed) the reaper returns its jobs at once instead of at the end of their leases.
   * Direct connections or a session-mode pooler only, not a transaction-mode pooler
   * (docs/workers.md, "Claims that die with their session"). Needs a 0.5.0 server.
   */
  releaseOnDisconnect?: boolean;
}

/**
 * Events, for logging and metrics:
 * - `claimed` (jobs: JobRecord[]): a dequeue_wait returned jobs
 * - `started` (job), `done` (job, ms): a handler ran and the job was completed
 * - `failed` (job, error, outcome): the handler threw; fail() made the job 'ready' again or 'failed'
 * - `lost` (job, StaleClaimError): QC003, this attempt no longer holds the job; not an error
 * - `handedBack` (job): stopping (or timed out with onTimeout 'handBack'), the job went back to
 *   ready with snooze(id, attempt): claimable at once, no attempt spent
 * - `snoozed` (job, seconds): the handler returned snooze(seconds)
 * - `heartbeat` (job, leaseExpiresAt)
 * - `error` (error): the worker's own trouble (lost connection, ...); emitted only when someone
 *   listens (an unheard 'error' would crash the process), always logged
 * - `stopping`, `stopped`
 */
export interface WorkerEvents<Payload = unknown> {
  claimed: [jobs: JobRecord<Payload>[]];
  started: [job: Job<Payload>];
  done: [job: Job<Payload>, ms: number];
  failed: [job: Job<Payload>, error: unknown, outcome: FailOutcome];
  lost: [job: Job<Payload>, error: StaleClaimError];
  handedBack: [job: JobRecord<Payload>];
  snoozed: [job: Job<Payload>, seconds: number];
  heartbeat: [job: Job<Payload>, leaseExpiresAt: Date];
  error: [error: unknown];
  stopping: [];
  stopped: [];
}

type AttemptState = 'running' | 'completed' | 'failed' | 'lost' | 'handedBack';

// One claim of one job by this worker, from dispatch to its end.
interface Attempt<Payload> {
  job: Job<Payload>;
  state: AttemptState;
  abort: AbortController;
  heartbeatTimer?: NodeJS.Timeout;
  heartbeatInFlight: boolean;
  finished: Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const TIMED_OUT = Symbol('timed out');

function composeMiddleware<Payload>(middleware: Middleware<Payload>[], handler: Handler<Payload>): Handler<Payload> {
  return middleware.reduceRight<Handler<Payload>>(
    (next, layer) => (job) => layer(job, () => Promise.resolve().then(() => next(job))),
    handler);
}

export class Worker<Payload = unknown> extends EventEmitter<WorkerEvents<Payload>> {
  readonly queue: string;
  readonly name: string;
  readonly concurrency: number;

  private readonly pool: PoolLike;
  private readonly handler: Handler<Payload>;
  private readonly waitMs: number;
  private readonly graceMs: number;
  private readonly retryDelayMs: number;
  private readonly stopSignals: NodeJS.Signals[];
  private readonly logger: Logger | null;
  private leaseMs: number | undefined;
  private readonly leaseGiven: boolean;
  private readonly releaseOnDisconnect: boolean;
  private readonly timeoutMs: number | undefined;
  private readonly timeoutGraceMs: number;
  private readonly onTimeout: 'fail' | 'handBack';
  private q: (name: string) => string = (name) => name;

  private readonly attempts = new Set<Attempt<Payload>>();
  private slotWaiters: (() => void)[] = [];
  private readonly pauseWakers = new Set<() => void>();
  private stopRequested = false;
  private claimLoop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private stoppedWaiters: (() => void)[] = [];
  private waiter: PoolClientLike | undefined;
  private waiterPid: number | undefined;
  private waitInFlight = false;
  private readonly onWaiterError = (err: Error) => this.report(err, 'waiting connection');
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.logger?.info(`claimqueue worker ${this.name}: ${signal}, stopping`);
    void this.stop();
  };

  constructor(options: WorkerOptions<Payload>) {
    super();
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
      throw new RangeError('concurrency must be an integer from 1 to 1000');
    }
    for (const key of ['lease', 'wait', 'grace', 'retryDelay', 'timeout', 'timeoutGrace'] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
        throw new RangeError(`${key} must be a number of milliseconds >= 0`);
      }
    }
    if (options.lease !== undefined && options.lease < 1) throw new RangeError('lease must be at least 1 ms');
    if (typeof options.handler !== 'function') throw new TypeError('handler must be a function');
    if (options.onTimeout !== undefined && options.onTimeout !== 'fail' && options.onTimeout !== 'handBack') {
      throw new RangeError("onTimeout must be 'fail' or 'handBack'");
    }
    this.pool = options.pool;
    this.queue = options.queue;
    // OpenTelemetry's span (when @opentelemetry/api is installed) is outermost; `tracing: false` turns it off.
    const tracing = options.tracing === false ? undefined : otelMiddleware(options.queue);
    this.handler = composeMiddleware(
      [...(tracing ? [tracing as Middleware<Payload>] : []), ...(options.middleware ?? [])], options.handler);
    this.timeoutMs = options.timeout;
    this.timeoutGraceMs = options.timeoutGrace ?? 5_000;
    this.onTimeout = options.onTimeout ?? 'fail';
    this.concurrency = concurrency;
    this.name = options.name ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.leaseMs = options.lease;
    this.leaseGiven = options.lease !== undefined;
    this.waitMs = options.wait ?? 30_000;
    this.graceMs = options.grace ?? 30_000;
    this.retryDelayMs = options.retryDelay ?? 1_000;
    this.stopSignals = options.stopSignals ?? ['SIGTERM', 'SIGINT'];
    this.logger = options.logger === undefined ? console : options.logger;
    this.releaseOnDisconnect = options.releaseOnDisconnect ?? false;
  }

  /** Jobs whose handlers are running now. */
  get running(): number {
    return this.attempts.size;
  }

  /**
   * Checks the extension (schema, version) and the queue, then starts claiming and resolves.
   * Rejects at once, claiming nothing, when the extension is missing or of a version this
   * client does not support, or the queue does not exist or this role may not see it
   * (QueueNotFoundError, the server's QC001). Calling it again returns the same promise.
   */
  start(): Promise<void> {
    if (!this.started) this.started = this.begin();
    return this.started;
  }

  private started: Promise<void> | undefined;

  private async begin(): Promise<void> {
    if (this.stopRequested) return;
    this.q = (await extensionOf(this.pool)).q;
    // The server's own error for an unknown queue: next_due raises QC001 naming it.
    try {
      await this.pool.query(`SELECT ${this.q('next_due')}($1)`, [this.queue]);
    } catch (err) {
      throw toClaimQueueError(err);
    }
    if (this.stopRequested) return;
    for (const signal of this.stopSignals) process.on(signal, this.onSignal);
    this.claimLoop = this.claimUntilStopped();
  }

  /** Starts, and resolves when the worker has stopped (stop() or a stop signal). */
  async run(): Promise<void> {
    await this.start();
    await this.whenStopped();
  }

  /**
   * For tests: starts, runs until the queue has no job due or running, then stops.
   * Jobs that a handler snoozes or retries into the future are not waited for.
   */
  async runUntilEmpty(): Promise<void> {
    await this.start();
    for (;;) {
      // clock_timestamp(), not now(): the server stamps a retry's run_at with its clock when
      // it fails or snoozes the job, which can be after this statement's start yet before
      // its snapshot, and now() would call that job not due and end the run early.
      const { rows } = await this.pool.query(
        `SELECT count(*)::int AS n FROM ${this.q('queue_jobs')}
          WHERE queue = $1 AND (state = 'running' OR (state = 'ready' AND run_at <= pg_catalog.clock_timestamp()))`,
        [this.queue]);
      if (rows[0].n === 0 && this.attempts.size === 0) break;
      await sleep(20);
    }
    await this.stop();
  }

  /**
   * Stops claiming, interrupts a sleeping dequeue_wait, gives running handlers up to
   * `grace` ms, then hands the jobs still running back with snooze(id, attempt), which spends
   * no attempt, and aborts their signals. Resolves when that is done; every call
   * returns the same promise.
   */
  stop(options: { grace?: number } = {}): Promise<void> {
    if (!this.stopped) {
      this.stopRequested = true;
      this.stopped = this.drain(options.grace ?? this.graceMs);
      this.stoppedWaiters.forEach((resolve) => resolve());
    }
    return this.stopped;
  }

  private async whenStopped(): Promise<void> {
    if (!this.stopped) await new Promise<void>((resolve) => this.stoppedWaiters.push(resolve));
    await this.stopped;
  }

  // --- claiming ---------------------------------------------------------------

  private async claimUntilStopped(): Promise<void> {
    while (!this.stopRequested && this.leaseMs === undefined) {
      try {
        this.leaseMs = await this.queueLeaseMs();
      } catch (err) {
        this.report(err, `reading the lease of queue ${this.queue}`);
        await this.pause(this.retryDelayMs);
      }
    }
    while (!this.stopRequested) {
      await this.freeSlot();
      if (this.stopRequested) break;
      let records: JobRecord<Payload>[];
      try {
        records = await this.claim(this.concurrency - this.attempts.size);
      } catch (err) {
        // Cancelled by stop(): the claim rolled back. stop() closes the connection.
        if (this.stopRequested) break;
        this.report(err, 'dequeue_wait');
        // Claims made with release_on_disconnect die with the waiting session, so a
        // connection that only saw a statement fail is kept for the running jobs.
        if (!(this.releaseOnDisconnect && isStatementError(err))) this.closeWaiter(err);
        await this.pause(this.retryDelayMs);
        continue;
      }
      // A claim that committed is run even when stop() came meanwhile: it is in
      // the worker's hands now and stop() waits for it like any other.
      if (records.length > 0) this.announce('claimed', records);
      for (const record of records) this.dispatch(record);
    }
  }

  private async claim(batch: number): Promise<JobRecord<Payload>[]> {
    if (!this.waiter) {
      const client = await this.pool.connect();
      client.on?.('error', this.onWaiterError);
      this.waiter = client;
      try {
        // The session is the worker's alone: a role's statement_timeout must not
        // cut a wait short (`wait` bounds it).
        const { rows } = await client.query(
          "SELECT pg_backend_pid() AS pid, set_config('statement_timeout', '0', false)");
        this.waiterPid = rows[0].pid;
      } catch (err) {
        this.closeWaiter(err);
        throw err;
      }
    }
    if (this.stopRequested) return [];
    // Nothing may be in flight on this connection but the CALL: stop() cancels
    // whatever runs on its backend.
    this.waitInFlight = true;
    try {
      // release_on_disconnect is named only when asked for: a 0.4.0 server has no such argument.
      const { rows } = await this.waiter.query(
        `CALL ${this.q('dequeue_wait')}($1, $2, batch => $3, lease => make_interval(secs => $4), ` +
          'wait => make_interval(secs => $5)' + (this.releaseOnDisconnect ? ', release_on_disconnect => true)' : ')'),
        [this.queue, this.name, batch, this.leaseGiven ? this.leaseMs! / 1000 : null, this.waitMs / 1000],
      );
      const claimed: any[] = rows[0]?.jobs ?? [];
      return claimed.map((row) => ({
        id: jobId(row.id),
        queue: this.queue,
        payload: row.payload,
        attempt: row.attempt,
        maxAttempts: row.max_attempts,
        priority: row.priority,
        leaseExpiresAt: new Date(row.lease_expires_at),
        enqueuedAt: new Date(row.enqueued_at),
      }));
    } catch (err) {
      throw toClaimQueueError(err);
    } finally {
      this.waitInFlight = false;
    }
  }

  private async queueLeaseMs(): Promise<number> {
    const { rows } = await this.pool.query(
      `SELECT extract(epoch FROM lease) * 1000 AS ms FROM ${this.q('queue_settings')} WHERE queue = $1`, [this.queue]);
    if (rows.length === 0) {
      throw new ClaimQueueError(`queue "${this.queue}" does not exist or this role holds no privilege on it`,
        { code: 'QC001' });
    }
    return Number(rows[0].ms);
  }

  private closeWaiter(err?: unknown): void {
    if (!this.waiter) return;
    this.waiter.removeListener?.('error', this.onWaiterError);
    // Closed, never given back to the pool: a late cancel must not reach another query.
    this.waiter.release(err instanceof Error ? err : true);
    this.waiter = undefined;
    this.waiterPid = undefined;
  }

  private freeSlot(): Promise<void> {
    if (this.attempts.size < this.concurrency || this.stopRequested) return Promise.resolve();
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    waiters.forEach((resolve) => resolve());
  }

  // A sleep that stop() cuts short.
  private pause(ms: number): Promise<void> {
    if (this.stopRequested) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pauseWakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pauseWakers.add(wake);
    });
  }

  // --- running a job ----------------------------------------------------------

  private dispatch(record: JobRecord<Payload>): void {
    const abort = new AbortController();
    const attempt = { state: 'running', abort, heartbeatInFlight: false } as Attempt<Payload>;
    attempt.job = {
      ...record,
      signal: abort.signal,
      completeInTransaction: (work) => this.completeInTransaction(attempt, work),
      snooze: (seconds) => new JobSnooze(seconds),
    };
    this.attempts.add(attempt);
    const beatEvery = Math.max(this.leaseMs! / 3, 10);
    attempt.heartbeatTimer = setInterval(() => void this.heartbeat(attempt), beatEvery);
    attempt.finished = this.runAttempt(attempt).finally(() => {
      clearInterval(attempt.heartbeatTimer);
      this.attempts.delete(attempt);
      this.wakeSlotWaiters();
    });
  }

  private async runAttempt(attempt: Attempt<Payload>): Promise<void> {
    const { job } = attempt;
    const started = Date.now();
    this.announce('started', job);
    let handlerError: unknown;
    let threw = false;
    let result: string | undefined;
    let snoozeFor: JobSnooze | undefined;
    try {
      const value = await this.withTimeout(attempt);
      if (value === TIMED_OUT) {
        await this.timedOut(attempt, Date.now() - started);
        return;
      }
      // A job completed by completeInTransaction() is done already: its handler's value is not kept.
      if (value instanceof JobSnooze) snoozeFor = value;
      else if (attempt.state === 'running') result = resultText(job, value);
    } catch (err) {
      threw = true;
      handlerError = toClaimQueueError(err);
    }
    try {
      if (snoozeFor && attempt.state === 'running') {
        await this.pool.query(`SELECT ${this.q('snooze')}($1, $2, make_interval(secs => $3))`,
          [job.id, job.attempt, snoozeFor.seconds]);
        attempt.state = 'handedBack';
        this.log('info', `job ${job.id} snoozed for ${snoozeFor.seconds} s`, job, Date.now() - started, 'snoozed');
        this.announce('snoozed', job, snoozeFor.seconds);
        return;
      }
      if (!threw && attempt.state === 'running') {
        try {
          if (result === undefined) await this.pool.query(`SELECT ${this.q('complete')}($1, $2)`, [job.id, job.attempt]);
          else await this.pool.query(`SELECT ${this.q('complete')}($1, $2, $3::jsonb)`, [job.id, job.attempt, result]);
          attempt.state = 'completed';
        } catch (err) {
          if (result === undefined || !isRefusedResult(err)) throw err;
          // The server refused the result (larger than claimqueue.max_payload_size, ...):
          // the attempt fails with the reason, as for a result that cannot be serialised.
          threw = true;
          handlerError = new TypeError(`the result of job ${job.id} was refused: ${errorText(err)}`);
        }
      }
      if (!threw) {
        if (attempt.state === 'completed') {
          this.log('debug', `job ${job.id} done`, job, Date.now() - started, 'done');
          this.announce('done', job, Date.now() - started);
        }
        return;
      }
      if (handlerError instanceof StaleClaimError) {
        this.markLost(attempt, handlerError);
      } else if (attempt.state === 'running') {
        const outcome = await this.failJob(job, handlerError);
        attempt.state = 'failed';
        const next = outcome === 'ready' ? 'will be retried' : 'no attempts left or not retryable';
        this.log('warn', `job ${job.id} attempt ${job.attempt} failed (${next}): ${errorText(handlerError)}`,
          job, Date.now() - started, 'failed');
        this.announce('failed', job, handlerError, outcome);
      } else if (attempt.state === 'completed') {
        this.report(handlerError, `job ${job.id}: the handler threw after its transaction completed the job`);
      }
      // 'lost' or 'handedBack': the job is not this attempt's any more; nothing to record.
    } catch (err) {
      const mapped = toClaimQueueError(err);
      if (mapped instanceof StaleClaimError) this.markLost(attempt, mapped);
      // Anything else (a lost connection, ...): the lease runs out and the job comes back.
      else this.report(mapped, `job ${job.id} attempt ${job.attempt}`);
    }
  }

  // The handler (through the middleware), raced against the timeout: its value, or
  // TIMED_OUT when it has not settled `timeoutGrace` ms after the timeout aborted it.
  private withTimeout(attempt: Attempt<Payload>): Promise<unknown> {
    const run = Promise.resolve().then(() => this.handler(attempt.job));
    if (this.timeoutMs === undefined) return run;
    let abortTimer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof TIMED_OUT>((resolve) => {
      abortTimer = setTimeout(() => {
        if (attempt.state === 'running') {
          attempt.abort.abort(new JobTimeoutError(`job ${attempt.job.id} timed out after ${this.timeoutMs} ms`));
        }
        graceTimer = setTimeout(() => resolve(TIMED_OUT), this.timeoutGraceMs);
      }, this.timeoutMs);
    });
    // An abandoned handler's later rejection must not be unhandled.
    run.catch(() => undefined);
    return Promise.race([run, expired]).finally(() => {
      clearTimeout(abortTimer);
      clearTimeout(graceTimer);
    });
  }

  // The handler outlived its timeout and grace: the job is failed or handed back, the slot freed.
  private async timedOut(attempt: Attempt<Payload>, ms: number): Promise<void> {
    const { job } = attempt;
    if (attempt.state !== 'running') return;
    const error = new JobTimeoutError(`job ${job.id} timed out after ${this.timeoutMs} ms ` +
      `and did not stop within ${this.timeoutGraceMs} ms`);
    try {
      if (this.onTimeout === 'handBack') {
        attempt.state = 'handedBack';
        clearInterval(attempt.heartbeatTimer);
        await this.pool.query(`SELECT ${this.q('snooze')}($1, $2)`, [job.id, job.attempt]);
        this.log('warn', error.message + '; handed back', job, ms, 'timedOut');
        this.announce('handedBack', job);
      } else {
        attempt.state = 'failed';
        clearInterval(attempt.heartbeatTimer);
        const outcome = await this.failJob(job, error);
        this.log('warn', error.message + '; failed', job, ms, 'timedOut');
        this.announce('failed', job, error, outcome);
      }
    } catch (err) {
      const mapped = toClaimQueueError(err);
      if (mapped instanceof StaleClaimError) this.reportLost(job, mapped);
      else this.report(mapped, `job ${job.id} after its timeout`);
    }
  }

  // fail() with the error's class, message and stack as error_detail; a JobFailure
  // says whether to retry and when.
  private async failJob(job: JobRecord<Payload>, error: unknown): Promise<FailOutcome> {
    const failure = error instanceof JobFailure ? error : undefined;
    const retryable = failure ? failure.retryable : true;
    const retryIn = retryable && failure?.retryIn !== undefined ? failure.retryIn / 1000 : null;
    const { rows } = await this.pool.query(
      `SELECT ${this.q('fail')}($1, $2, $3, make_interval(secs => $4), retryable => $5,
                               error_detail => $6::jsonb) AS outcome`,
      [job.id, job.attempt, errorText(error).slice(0, 8192), retryIn, retryable, JSON.stringify(errorDetail(error))]);
    return rows[0].outcome;
  }

  private log(level: 'debug' | 'info' | 'warn' | 'error', message: string, job: JobRecord<Payload>,
              durationMs: number, outcome: string): void {
    if (!this.logger) return;
    const fields = { worker: this.name, queue: this.queue, jobId: job.id, attempt: job.attempt, durationMs, outcome };
    const write = level === 'debug' ? this.logger.debug : this.logger[level];
    write?.call(this.logger, `claimqueue worker ${this.name}: ${message}`, fields);
  }

  private async completeInTransaction<T>(
    attempt: Attempt<Payload>,
    work: (client: PoolClientLike) => Promise<T>,
  ): Promise<T> {
    const { job } = attempt;
    if (attempt.state !== 'running') {
      throw new StaleClaimError(`job ${job.id} attempt ${job.attempt} is no longer held by this worker ` +
        `(${attempt.state})`, { code: 'QC003' });
    }
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query(`SELECT ${this.q('complete')}($1, $2)`, [job.id, job.attempt]);
      await client.query('COMMIT');
      attempt.state = 'completed';
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      const mapped = toClaimQueueError(err);
      if (mapped instanceof StaleClaimError) this.markLost(attempt, mapped);
      throw mapped;
    } finally {
      client.release(broken);
    }
  }

  private async heartbeat(attempt: Attempt<Payload>): Promise<void> {
    if (attempt.state !== 'running' || attempt.heartbeatInFlight) return;
    attempt.heartbeatInFlight = true;
    const { job } = attempt;
    try {
      const { rows } = await this.pool.query(
        `SELECT ${this.q('heartbeat')}($1, $2, make_interval(secs => $3)) AS expires`,
        [job.id, job.attempt, this.leaseMs! / 1000]);
      this.announce('heartbeat', job, new Date(rows[0].expires));
    } catch (err) {
      const mapped = toClaimQueueError(err);
      if (mapped instanceof StaleClaimError) this.markLost(attempt, mapped);
      else this.report(mapped, `heartbeat of job ${job.id}`);
    } finally {
      attempt.heartbeatInFlight = false;
    }
  }

  // QC003: this attempt lost the job. Logged and announced once, never as an error.
  private markLost(attempt: Attempt<Payload>, err: StaleClaimError): void {
    if (attempt.state !== 'running') return;
    attempt.state = 'lost';
    clearInterval(attempt.heartbeatTimer);
    attempt.abort.abort(err);
    this.reportLost(attempt.job, err);
  }

  private reportLost(job: Job<Payload>, err: StaleClaimError): void {
    this.logger?.warn(`claimqueue worker ${this.name}: job ${job.id} attempt ${job.attempt} ` +
      `was lost (stale claim: lease expired or job cancelled); another attempt owns it`);
    this.announce('lost', job, err);
  }

  // --- stopping ---------------------------------------------------------------

  private async drain(graceMs: number): Promise<void> {
    this.announce('stopping');
    this.wakeSlotWaiters();
    [...this.pauseWakers].forEach((wake) => wake());
    await this.interruptClaimLoop();

    if (this.attempts.size > 0) {
      let graceTimer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...this.attempts].map((attempt) => attempt.finished)),
        new Promise<void>((resolve) => { graceTimer = setTimeout(resolve, graceMs); }),
      ]);
      clearTimeout(graceTimer);
    }
    await Promise.all([...this.attempts].map((attempt) => this.handBack(attempt)));
    await this.handBackUnknownClaims();

    // Closed last: with release_on_disconnect the running claims belong to its session.
    this.closeWaiter();
    for (const signal of this.stopSignals) process.removeListener(signal, this.onSignal);
    this.announce('stopped');
  }

  // Cancels the waiting CALL until the claim loop has ended. A cancel that
  // arrives before the CALL starts is lost, hence the repeat; one that arrives
  // during the claim rolls the claim back. The connection is closed only after
  // the last cancel went out, so no cancel can reach a later backend with its pid.
  private async interruptClaimLoop(): Promise<void> {
    if (!this.claimLoop) return;
    let ended = false;
    const loop = this.claimLoop.then(() => { ended = true; });
    while (!ended) {
      if (this.waitInFlight && this.waiterPid !== undefined) {
        await this.pool.query('SELECT pg_cancel_backend($1)', [this.waiterPid])
          .catch((err) => this.report(err, 'cancelling the waiting dequeue'));
      }
      await Promise.race([loop, sleep(250)]);
    }
    // A CALL cancelled on it ended in an ERROR: nothing runs on it any more. It stays open
    // until drain() ends, so claims made with release_on_disconnect outlive the grace period.
    if (!this.releaseOnDisconnect) this.closeWaiter();
  }

  private async handBack(attempt: Attempt<Payload>): Promise<void> {
    if (attempt.state !== 'running') return;
    attempt.state = 'handedBack';
    clearInterval(attempt.heartbeatTimer);
    attempt.abort.abort(new Error('worker stopping'));
    const stale = await this.handBackJob(attempt.job);
    // The attempt had lost the job before it could be handed back.
    if (stale) this.reportLost(attempt.job, stale);
  }

  // snooze(id, attempt); a stale claim (QC003) is returned, not reported.
  private async handBackJob(job: JobRecord<Payload>): Promise<StaleClaimError | undefined> {
    try {
      // snooze: claimable at once, and no attempt spent.
      await this.pool.query(`SELECT ${this.q('snooze')}($1, $2)`, [job.id, job.attempt]);
      this.logger?.info(`claimqueue worker ${this.name}: handed job ${job.id} back (worker stopping)`);
      this.announce('handedBack', job);
    } catch (err) {
      const mapped = toClaimQueueError(err);
      if (mapped instanceof StaleClaimError) return mapped;
      this.report(mapped, `handing job ${job.id} back`);
    }
    return undefined;
  }

  // Every job still running under this worker's name (unique per worker) now
  // is one no handler will finish: a claim that committed while its CALL was
  // being cancelled, or a hand-back that failed above. Each is handed back.
  private async handBackUnknownClaims(): Promise<void> {
    try {
      const { rows } = await this.pool.query(
        `SELECT id, attempt, payload, max_attempts, priority, lease_expires_at, created_at
           FROM ${this.q('queue_jobs')}
          WHERE queue = $1 AND worker = $2 AND state = 'running' AND lease_expires_at IS NOT NULL`,
        [this.queue, this.name]);
      // QC003 here: the job finished meanwhile; nothing to hand back.
      for (const row of rows) {
        await this.handBackJob({
          id: jobId(row.id),
          queue: this.queue,
          payload: row.payload,
          attempt: row.attempt,
          maxAttempts: row.max_attempts,
          priority: row.priority,
          leaseExpiresAt: new Date(row.lease_expires_at),
          enqueuedAt: new Date(row.created_at),
        });
      }
    } catch (err) {
      this.report(err, 'looking for claims left behind');
    }
  }

  private report(err: unknown, context: string): void {
    this.logger?.error(`claimqueue worker ${this.name}: ${context}: ${errorText(err)}`);
    if (this.listenerCount('error') > 0) this.announce('error', err);
  }

  // emit() that a throwing listener cannot break: the worker's own state comes first.
  private announce<K extends keyof WorkerEvents<Payload>>(event: K, ...args: WorkerEvents<Payload>[K]): void {
    try {
      (this.emit as (name: K, ...rest: unknown[]) => boolean)(event, ...args);
    } catch (err) {
      this.logger?.error(`claimqueue worker ${this.name}: a '${String(event)}' listener threw: ${errorText(err)}`);
    }
  }
}

// The handler's value as jsonb text, undefined for none. A value JSON cannot
// represent (a BigInt, a cycle, a function) is the handler's error.
function resultText(job: JobRecord<unknown>, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new TypeError(`the result of job ${job.id} is not JSON-serialisable: ${errorText(err)}`);
  }
  if (text === undefined) {
    throw new TypeError(`the result of job ${job.id} is not JSON-serialisable: a ${typeof value}`);
  }
  return text;
}

// A result the server would not store: too large (54000) or not valid jsonb (class 22).
function isRefusedResult(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return isStatementError(err) && typeof code === 'string' && (code === '54000' || code.startsWith('22'));
}

// An ERROR that ended one statement; the session goes on (not FATAL, not a lost connection).
function isStatementError(err: unknown): boolean {
  for (let e = err as { severity?: unknown; cause?: unknown } | undefined; e && typeof e === 'object';
    e = e.cause as typeof e) {
    if (e.severity !== undefined) return e.severity === 'ERROR';
  }
  return false;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
