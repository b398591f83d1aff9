// What an operator may do: pause and resume a queue or a schedule, retry and
// cancel one job or many. A small interface of its own, so the dashboard and the
// command line do not care which client makes the calls; the server's grants
// decide each call (a role without the queue's manage privilege gets 42501).

import { ClaimQueue, type PoolLike } from 'claimqueue';

export interface Actions {
  pause(queue: string): Promise<boolean>;
  resume(queue: string): Promise<boolean>;
  pauseSchedule(name: string): Promise<boolean>;
  resumeSchedule(name: string): Promise<boolean>;
  retry(id: number): Promise<void>;
  cancel(id: number): Promise<void>;
  /** Dead letters of a queue back to ready; returns how many. */
  retryJobs(queue: string, states: string[], finishedBefore?: Date | null, maxJobs?: number | null): Promise<number>;
  /** Ready (or running) jobs of a queue cancelled; returns how many. */
  cancelJobs(queue: string, states: string[], createdBefore?: Date | null, maxJobs?: number | null): Promise<number>;
}

/**
 * The actions as calls of the Node client's admin API (ClaimQueue), the one
 * implementation of these calls: it finds the extension's schema itself. Errors
 * keep the server's SQLSTATE in `code` (42501 for a refusal).
 */
export function adminActions(pool: PoolLike): Actions {
  const cq = new ClaimQueue({ pool });
  return {
    pause: (queue) => cq.pauseQueue(queue),
    resume: (queue) => cq.resumeQueue(queue),
    pauseSchedule: (name) => cq.pauseSchedule(name),
    resumeSchedule: (name) => cq.resumeSchedule(name),
    retry: (id) => cq.retry(id),
    cancel: (id) => cq.cancel(id),
    retryJobs: (queue, states, finishedBefore = null, maxJobs = null) =>
      cq.retryJobs(queue, { states, before: finishedBefore ?? undefined, maxJobs: maxJobs ?? undefined }),
    cancelJobs: (queue, states, createdBefore = null, maxJobs = null) =>
      cq.cancelJobs(queue, { states, before: createdBefore ?? undefined, maxJobs: maxJobs ?? undefined }),
  };
}
