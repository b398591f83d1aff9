// What an operator may do: pause and resume a queue or a schedule, retry and
// cancel one job or many. A small interface of its own, so the dashboard and the command line do
// not care which client makes the calls; the server's grants decide each call
// (a role without the queue's manage privilege gets 42501).

import type { Queryable } from 'claimqueue';

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

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** The actions as calls of the extension's functions, qualified with its schema. */
export function sqlActions(db: Queryable, schema: string): Actions {
  const s = quoteIdent(schema);
  return {
    async pause(queue) {
      const { rows } = await db.query(`SELECT ${s}.pause_queue($1) AS changed`, [queue]);
      return rows[0].changed === true;
    },
    async resume(queue) {
      const { rows } = await db.query(`SELECT ${s}.resume_queue($1) AS changed`, [queue]);
      return rows[0].changed === true;
    },
    async pauseSchedule(name) {
      const { rows } = await db.query(`SELECT ${s}.pause_schedule($1) AS changed`, [name]);
      return rows[0].changed === true;
    },
    async resumeSchedule(name) {
      const { rows } = await db.query(`SELECT ${s}.resume_schedule($1) AS changed`, [name]);
      return rows[0].changed === true;
    },
    async retry(id) {
      await db.query(`SELECT ${s}.retry($1::bigint)`, [id]);
    },
    async cancel(id) {
      await db.query(`SELECT ${s}.cancel($1::bigint)`, [id]);
    },
    async retryJobs(queue, states, finishedBefore = null, maxJobs = null) {
      const { rows } = await db.query(
        `SELECT ${s}.retry_jobs($1, $2::text[], $3::timestamptz, $4::integer) AS n`,
        [queue, states, finishedBefore, maxJobs]);
      return Number(rows[0].n);
    },
    async cancelJobs(queue, states, createdBefore = null, maxJobs = null) {
      const { rows } = await db.query(
        `SELECT ${s}.cancel_jobs($1, $2::text[], $3::timestamptz, $4::integer) AS n`,
        [queue, states, createdBefore, maxJobs]);
      return Number(rows[0].n);
    },
  };
}
