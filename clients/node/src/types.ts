import type { JobSnooze } from './outcomes';
// The shapes claimqueue needs from node-postgres (or anything with the same
// methods), and the job types handed to handlers.

/** Anything that runs a parameterized query: pg.Client, pg.PoolClient, pg.Pool. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** A connection checked out of a pool (pg.PoolClient). */
export interface PoolClientLike extends Queryable {
  /** Gives the connection back; a truthy argument closes it instead (node-postgres). */
  release(destroy?: boolean | Error): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

/** A connection pool (pg.Pool). */
export interface PoolLike extends Queryable {
  connect(): Promise<PoolClientLike>;
}

/** A job as claimed: the columns dequeue() returns. */
export interface JobRecord<Payload = unknown> {
  id: number;
  queue: string;
  payload: Payload;
  /** The fencing token: complete, fail and heartbeat act only while the job runs under it. */
  attempt: number;
  maxAttempts: number;
  priority: number;
  leaseExpiresAt: Date;
  enqueuedAt: Date;
}

/** A claimed job as a handler gets it: the record and what this attempt may do with it. */
export interface Job<Payload = unknown> extends JobRecord<Payload> {
  /**
   * Aborted when this attempt no longer holds the job: it was lost (QC003: lease expired,
   * cancelled) or handed back because the worker is stopping. A handler doing long work
   * should stop when it fires.
   */
  readonly signal: AbortSignal;
  /**
   * Runs `work` in a transaction on a pool connection and completes the job in that same
   * transaction: the rows `work` writes commit together with the completion, or not at all.
   * If the claim went stale the transaction rolls back and this throws StaleClaimError.
   * After it returns the job is done; the worker does not complete it again.
   */
  completeInTransaction<T>(work: (client: PoolClientLike) => Promise<T>): Promise<T>;
  /** `return job.snooze(seconds)`: the job runs again in `seconds`, spending no attempt. */
  snooze(seconds: number): JobSnooze;
}

/** What a handler's throw became. */
export type FailOutcome = 'ready' | 'failed';

/**
 * Where a worker logs. Job events come with a second argument of fields:
 * { worker, queue, jobId, attempt, durationMs, outcome }; `debug` (optional) gets each done job.
 */
export interface Logger {
  debug?(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}
