// enqueue(), enqueueBatch() and enqueueMany() on the caller's connection, so a
// job can be added in the caller's own transaction (it becomes claimable when
// that commits). Calls are qualified with the extension's schema (schema.ts).

import { toClaimQueueError } from './errors';
import { extensionOf } from './schema';
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
  /** What the queue's max_running_per_key counts by (1-512 bytes). */
  concurrencyKey?: string;
}

/** The batch's options: every job of the batch gets the same ones (no dedupKey). */
export type EnqueueBatchOptions = Omit<EnqueueOptions, 'dedupKey'>;

/** One job of enqueueMany(): its payload and its own options (dedupKey included). */
export interface BatchJob<Payload = unknown> extends EnqueueOptions {
  payload: Payload;
}

/** Adds a job on `db` (a client inside your transaction, or a pool); returns its id. */
export async function enqueue<Payload = unknown>(
  db: Queryable,
  queue: string,
  payload: Payload | Record<string, never> = {},
  options: EnqueueOptions = {},
): Promise<number> {
  try {
    const { q } = await extensionOf(db);
    const { clause, values } = namedArguments(options, [queue, JSON.stringify(payload ?? {})]);
    const { rows } = await db.query(`SELECT ${q('enqueue')}($1, $2::jsonb${clause}) AS id`, values);
    return jobId(rows[0].id);
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

/** Adds one job per payload in one statement, all with the same options; ids in payload order. */
export async function enqueueBatch(
  db: Queryable,
  queue: string,
  payloads: unknown[],
  options: EnqueueBatchOptions = {},
): Promise<number[]> {
  try {
    const { q } = await extensionOf(db);
    const { clause, values } = namedArguments(options, [
      queue,
      payloads.map((payload) => JSON.stringify(payload ?? {})),
    ]);
    const { rows } = await db.query(
      `SELECT id FROM ${q('enqueue_batch')}($1, $2::jsonb[]${clause}) AS id`, values);
    return rows.map((row) => jobId(row.id));
  } catch (err) {
    throw toClaimQueueError(err);
  }
}

/**
 * Adds jobs with options of their own (run_at, priority, max_attempts, dedup and
 * concurrency keys) in one statement, all or none; returns their ids in order. A job whose
 * dedupKey a live job holds (or an earlier job of the same call) gets that job's id.
 */
export async function enqueueMany<Payload = unknown>(
  db: Queryable,
  queue: string,
  jobs: BatchJob<Payload>[],
): Promise<number[]> {
  if (jobs.length === 0) return [];
  try {
    const { q } = await extensionOf(db);
    const column = <T>(pick: (job: BatchJob<Payload>) => T | undefined) => jobs.map((job) => pick(job) ?? null);
    const { rows } = await db.query(
      `SELECT ${q('enqueue')}($1, u.payload, u.run_at, coalesce(u.priority, 0), u.max_attempts,
                              u.dedup_key, u.concurrency_key) AS id
         FROM unnest($2::jsonb[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[])
              WITH ORDINALITY AS u(payload, run_at, priority, max_attempts, dedup_key, concurrency_key, o)
        ORDER BY u.o`,
      [
        queue,
        jobs.map((job) => JSON.stringify(job.payload ?? {})),
        column((job) => (job.runAt instanceof Date ? job.runAt.toISOString() : job.runAt)),
        column((job) => job.priority),
        column((job) => job.maxAttempts),
        column((job) => job.dedupKey),
        column((job) => job.concurrencyKey),
      ]);
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
