// claimqueue's SQLSTATEs (class QC, see src/errors.h in the extension) as error classes.

/** The SQLSTATEs claimqueue raises itself, by name. */
export const SqlState = {
  QueueNotFound: 'QC001',
  JobNotFound: 'QC002',
  StaleClaim: 'QC003',
  JobStateConflict: 'QC004',
  IsolationNotSupported: 'QC005',
  ScheduleNotFound: 'QC006',
  QueueElsewhere: 'QC007',
  LockNamespaceNotFound: 'QCL01',
  LockKeyModeMismatch: 'QCL02',
  LockKeyNotFound: 'QCL03',
} as const;

/** Fields of a server error as node-postgres reports them. */
interface ServerErrorFields {
  message?: string;
  code?: string;
  detail?: string;
  hint?: string;
}

/** An error raised by claimqueue (SQLSTATE class QC); `cause` is the driver's error. */
export class ClaimQueueError extends Error {
  readonly code: string;
  readonly detail: string | undefined;
  readonly hint: string | undefined;

  constructor(message: string, fields: { code: string; detail?: string; hint?: string; cause?: unknown }) {
    super(message, { cause: fields.cause });
    this.name = new.target.name;
    this.code = fields.code;
    this.detail = fields.detail;
    this.hint = fields.hint;
  }
}

/** QC001: the named queue does not exist. */
export class QueueNotFoundError extends ClaimQueueError {}
/** QC002: no job has that id. */
export class JobNotFoundError extends ClaimQueueError {}
/**
 * QC003: the job is no longer running under that attempt (its lease expired and it was
 * handed to another worker, it was cancelled, or it was handed back). Not a failure of
 * the job: this attempt lost it, and whatever it wrote in the completing transaction
 * was rolled back.
 */
export class StaleClaimError extends ClaimQueueError {}
/** QC004: retry of a job that is not failed or cancelled, cancel of a finished job. */
export class JobStateConflictError extends ClaimQueueError {}
/** QC005: a claim, reap, purge or drop_queue under REPEATABLE READ or SERIALIZABLE. */
export class IsolationNotSupportedError extends ClaimQueueError {}
/** QC006: unschedule, pause_schedule or resume_schedule of a schedule that does not exist. */
export class ScheduleNotFoundError extends ClaimQueueError {}
/**
 * QC007: under Citus, a call made on a worker for a queue (or a job) whose shard another
 * node holds. Call through the coordinator or on the node that holds it.
 */
export class QueueElsewhereError extends ClaimQueueError {}
/** QCL01: a lock namespace that is not registered. */
export class LockNamespaceNotFoundError extends ClaimQueueError {}
/** QCL02: a text key in an integer namespace or the reverse. */
export class LockKeyModeMismatchError extends ClaimQueueError {}
/** QCL03: a key not registered in a registered namespace. */
export class LockKeyNotFoundError extends ClaimQueueError {}

const classBySqlState: Record<string, typeof ClaimQueueError> = {
  [SqlState.QueueNotFound]: QueueNotFoundError,
  [SqlState.JobNotFound]: JobNotFoundError,
  [SqlState.StaleClaim]: StaleClaimError,
  [SqlState.JobStateConflict]: JobStateConflictError,
  [SqlState.IsolationNotSupported]: IsolationNotSupportedError,
  [SqlState.ScheduleNotFound]: ScheduleNotFoundError,
  [SqlState.QueueElsewhere]: QueueElsewhereError,
  [SqlState.LockNamespaceNotFound]: LockNamespaceNotFoundError,
  [SqlState.LockKeyModeMismatch]: LockKeyModeMismatchError,
  [SqlState.LockKeyNotFound]: LockKeyNotFoundError,
};

/**
 * The claimqueue error class for a driver error with a QC SQLSTATE (the driver's
 * error becomes its `cause`); any other value is returned as it is.
 */
export function toClaimQueueError(err: unknown): unknown {
  if (err instanceof ClaimQueueError || typeof err !== 'object' || err === null) return err;
  const fields = err as ServerErrorFields;
  if (typeof fields.code !== 'string' || !fields.code.startsWith('QC')) return err;
  const ErrorClass = classBySqlState[fields.code] ?? ClaimQueueError;
  return new ErrorClass(fields.message ?? fields.code, {
    code: fields.code,
    detail: fields.detail,
    hint: fields.hint,
    cause: err,
  });
}

/** True for a stale claim (QC003), whether mapped to StaleClaimError or still the driver's error. */
export function isStaleClaim(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as ServerErrorFields).code === SqlState.StaleClaim;
}
