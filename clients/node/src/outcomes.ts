// What a handler can say besides returning a result or throwing: snooze (come
// back later, no attempt spent), fail with a retry delay of its choosing, or
// fail for good (not retryable). And the error detail every failure sends.

/** Returned by a handler (`return snooze(60)` or `return job.snooze(60)`): back to ready in `seconds`. */
export class JobSnooze {
  constructor(readonly seconds: number) {
    if (!(Number.isFinite(seconds) && seconds >= 0)) throw new RangeError('snooze takes seconds >= 0');
  }
}

/** The handler's way to snooze its job: the job runs again in `seconds`, spending no attempt. */
export function snooze(seconds: number): JobSnooze {
  return new JobSnooze(seconds);
}

export interface JobFailureOptions {
  /** Retry after this many ms instead of the queue's backoff. */
  retryIn?: number;
  /** false: fail the job at once, whatever attempts are left (default true). */
  retryable?: boolean;
  cause?: unknown;
}

/** Thrown by a handler to fail the attempt with a retry delay, or for good. */
export class JobFailure extends Error {
  readonly retryIn: number | undefined;
  readonly retryable: boolean;

  constructor(message: string, options: JobFailureOptions = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    if (options.retryIn !== undefined && !(Number.isFinite(options.retryIn) && options.retryIn >= 0)) {
      throw new RangeError('retryIn must be a number of milliseconds >= 0');
    }
    this.retryIn = options.retryIn;
    this.retryable = options.retryable ?? true;
  }
}

/** Thrown by a handler for an error no retry can cure: the job fails at once. */
export class NonRetryableError extends JobFailure {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, cause: options.cause });
  }
}

/** The reason a job's signal aborts at its timeout, and the error of a job failed by it. */
export class JobTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobTimeoutError';
  }
}

const MAX_STACK = 16_384;

/** What fail() keeps as error_detail: the error's class, message and stack (stack cut at 16 kB). */
export function errorDetail(error: unknown): { class: string; message: string; stack: string | null } {
  if (error instanceof Error) {
    return {
      class: error.constructor?.name || error.name,
      message: error.message.slice(0, MAX_STACK),
      stack: error.stack ? error.stack.slice(0, MAX_STACK) : null,
    };
  }
  return { class: typeof error, message: String(error).slice(0, MAX_STACK), stack: null };
}
