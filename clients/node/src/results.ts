// Reading jobs back: jobStatus() (job_status) and awaitJobs() (CALL await_jobs),
// for request/response and fan-in over the queue.

import { jobId } from './enqueue';
import { toClaimQueueError } from './errors';
import { extensionOf } from './schema';
import type { Queryable } from './types';

/** A job's state as job_status() and await_jobs() report it. */
export interface JobStatus<Result = unknown> {
  id: number;
  /** 'ready', 'running', 'done', 'failed' or 'cancelled'; null for a job that does not exist
   * or whose queue this role holds no privilege on (the two look alike). */
  state: string | null;
  attempt: number | null;
  /** What complete() stored (a handler's return value); null until then, or if none was. */
  result: Result | null;
  lastError: string | null;
}

export interface AwaitJobsOptions {
  /** Longest wait in milliseconds (default 30 s, as the server's); 0 looks once without waiting. */
  timeout?: number;
}

/** One status per id, in the order of `ids`. */
export async function jobStatus<Result = unknown>(db: Queryable, ids: number[]): Promise<JobStatus<Result>[]> {
  try {
    const { q } = await extensionOf(db);
    const { rows } = await db.query(
      `SELECT id, state, attempt, result, last_error FROM ${q('job_status')}($1::bigint[])`, [ids]);
    return rows.map((row) => statusOf<Result>(row));
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

/**
 * Waits in the server until every job in `ids` is done, failed or cancelled, or until
 * `timeout` passes (not an error: unfinished jobs come back with their current state),
 * then returns their statuses in the order of `ids`.
 *
 * `CALL await_jobs` holds the connection it runs on for the whole wait (from a pool, one
 * connection per waiting call) but no snapshot or transaction: it commits before it sleeps.
 * It must be a statement of its own, not inside BEGIN (25001), unless `timeout` is 0; a
 * statement_timeout of the session ends it with an error.
 */
export async function awaitJobs<Result = unknown>(
  db: Queryable,
  ids: number[],
  options: AwaitJobsOptions = {},
): Promise<JobStatus<Result>[]> {
  const timeout = options.timeout ?? 30_000;
  if (!(Number.isFinite(timeout) && timeout >= 0)) {
    throw new RangeError('timeout must be a number of milliseconds >= 0');
  }
  try {
    const { q } = await extensionOf(db);
    const { rows } = await db.query(`CALL ${q('await_jobs')}($1::bigint[], make_interval(secs => $2), NULL)`,
      [ids, timeout / 1000]);
    const jobs: any[] = rows[0]?.jobs ?? [];
    return jobs.map((row) => statusOf<Result>(row));
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

function statusOf<Result>(row: any): JobStatus<Result> {
  return {
    id: jobId(row.id),
    state: row.state ?? null,
    attempt: row.attempt ?? null,
    result: row.result ?? null,
    lastError: row.last_error ?? null,
  };
}

/** One failed attempt of a job's error history (job_errors). */
export interface JobError {
  attempt: number;
  failedAt: Date;
  error: string | null;
  /** What the worker sent as error_detail: this client sends { class, message, stack }. */
  detail: Record<string, unknown> | null;
}

/** The job's error history, oldest first (the latest 20 failed attempts); [] for none or no access. */
export async function jobErrors(db: Queryable, id: number): Promise<JobError[]> {
  try {
    const { q } = await extensionOf(db);
    const { rows } = await db.query(
      `SELECT attempt, failed_at, error, detail FROM ${q('job_errors')}($1)`, [id]);
    return rows.map((row) => ({
      attempt: row.attempt,
      failedAt: new Date(row.failed_at),
      error: row.error ?? null,
      detail: row.detail ?? null,
    }));
  } catch (err) {
    throw toClaimQueueError(err);
  }
}
