// enqueue() and enqueueBatch() on the caller's connection, so a job can be
// added in the caller's own transaction (it becomes claimable when that commits).

import { toClaimQueueError } from './errors';
import type { Queryable } from './types';

export interface EnqueueOptions {
  /** Not claimable before this time (default: now). */
  runAt?: Date | string;
  /** -100 ... 100, higher runs first (default 0). */
  priority?: number;
  /** Default: the queue's. */
  maxAttempts?: number;
  /** While a job of the queue with this key is ready or running, its id is returned instead. */
  dedupKey?: string;
  /** What the queue's max_running_per_key counts by (1-512 bytes; a 0.5.0 server). */
  concurrencyKey?: string;
}

/** The batch's options: every job of the batch gets the same concurrencyKey. */
export type EnqueueBatchOptions = Omit<EnqueueOptions, 'dedupKey'>;

/** Adds a job on `db` (a client inside your transaction, or a pool); returns its id. */
export async function enqueue(
  db: Queryable,
  queue: string,
  payload: unknown = {},
  options: EnqueueOptions = {},
): Promise<number> {
  const { clause, values } = namedArguments(options, [queue, JSON.stringify(payload ?? {})]);
  try {
    const { rows } = await db.query(`SELECT enqueue($1, $2::jsonb${clause}) AS id`, values);
    return jobId(rows[0].id);
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

/** Adds one job per payload in one statement; returns their ids in payload order. */
export async function enqueueBatch(
  db: Queryable,
  queue: string,
  payloads: unknown[],
  options: EnqueueBatchOptions = {},
): Promise<number[]> {
  const { clause, values } = namedArguments(options, [
    queue,
    payloads.map((payload) => JSON.stringify(payload ?? {})),
  ]);
  try {
    const { rows } = await db.query(
      `SELECT id FROM enqueue_batch($1, $2::jsonb[]${clause}) AS id`, values);
    return rows.map((row) => jobId(row.id));
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

// Only the options given are passed, so the server's defaults apply to the rest
// (a NULL priority would be refused, not defaulted).
function namedArguments(options: EnqueueOptions, values: unknown[]) {
  const parts: string[] = [];
  const add = (name: string, value: unknown, cast: string) => {
    if (value === undefined) return;
    values.push(value);
    parts.push(`${name} => $${values.length}::${cast}`);
  };
  add('run_at', options.runAt, 'timestamptz');
  add('priority', options.priority, 'int');
  add('max_attempts', options.maxAttempts, 'int');
  add('dedup_key', options.dedupKey, 'text');
  add('concurrency_key', options.concurrencyKey, 'text');
  return { clause: parts.length ? ', ' + parts.join(', ') : '', values };
}

/** A bigint id as a JavaScript number (ids come from a sequence, far below 2^53). */
export function jobId(value: unknown): number {
  const id = Number(value);
  if (!Number.isSafeInteger(id)) throw new RangeError(`job id ${String(value)} is not a safe integer`);
  return id;
}
