// claimqueue for node-postgres: enqueue on your own connection, read or await
// jobs' results and errors, the whole SQL API (ClaimQueue), and a Worker that
// claims with dequeue_wait, heartbeats, completes (storing the handler's
// result), fails, snoozes or times out, and drains on stop.
export { enqueue, enqueueBatch, enqueueMany } from './enqueue';
export type { EnqueueOptions, EnqueueBatchOptions, BatchJob } from './enqueue';
export { jobStatus, awaitJobs, jobErrors } from './results';
export type { JobStatus, AwaitJobsOptions, JobError } from './results';
export { Worker } from './worker';
export type { Handler, Middleware, WorkerOptions, WorkerEvents } from './worker';
export { WorkerGroup } from './group';
export type { WorkerGroupOptions, QueueSpec } from './group';
export { ClaimQueue } from './admin';
export type {
  ClaimQueueOptions, CreateQueueOptions, QueueOptions, Duration, ScheduleOptions, Schedule, BulkOptions,
  JobInfo, DeadLetterOptions, DeadLetterCursor, DeadLetterPage, QueueStats, QueueMetrics,
} from './admin';
export {
  extensionOf, forgetExtension, checkVersion, compareVersions, SUPPORTED_EXTENSION,
  ExtensionMissingError, UnsupportedVersionError,
} from './schema';
export type { ExtensionInfo } from './schema';
export { snooze, JobSnooze, JobFailure, NonRetryableError, JobTimeoutError, errorDetail } from './outcomes';
export type { JobFailureOptions } from './outcomes';
export {
  SqlState,
  ClaimQueueError,
  QueueNotFoundError,
  JobNotFoundError,
  StaleClaimError,
  JobStateConflictError,
  IsolationNotSupportedError,
  ScheduleNotFoundError,
  QueueElsewhereError,
  LockNamespaceNotFoundError,
  LockKeyModeMismatchError,
  LockKeyNotFoundError,
  toClaimQueueError,
  isStaleClaim,
} from './errors';
export type { Job, JobRecord, FailOutcome, Logger, Queryable, PoolLike, PoolClientLike } from './types';
export * from './inspect';
