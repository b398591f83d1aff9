// claimqueue for node-postgres: enqueue on your own connection, read or await
// jobs' results, and a Worker that claims with dequeue_wait, heartbeats,
// completes (storing the handler's result) or fails, and drains on stop.
export { enqueue, enqueueBatch } from './enqueue';
export type { EnqueueOptions, EnqueueBatchOptions } from './enqueue';
export { jobStatus, awaitJobs } from './results';
export type { JobStatus, AwaitJobsOptions } from './results';
export { Worker } from './worker';
export type { Handler, WorkerOptions, WorkerEvents } from './worker';
export {
  SqlState,
  ClaimQueueError,
  QueueNotFoundError,
  JobNotFoundError,
  StaleClaimError,
  JobStateConflictError,
  IsolationNotSupportedError,
  LockNamespaceNotFoundError,
  LockKeyModeMismatchError,
  LockKeyNotFoundError,
  toClaimQueueError,
  isStaleClaim,
} from './errors';
export type { Job, JobRecord, FailOutcome, Logger, Queryable, PoolLike, PoolClientLike } from './types';
