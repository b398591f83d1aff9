// Several queues served from one process over one pool: a Worker per queue,
// each with its own handler and concurrency, started, stopped and drained
// together, with one set of stop signals. Each queue's Worker holds one
// waiting connection of its own; handlers, heartbeats and completions share
// the pool.

import type { Handler, Worker as WorkerType, WorkerOptions } from './worker';
import { Worker } from './worker';
import type { PoolLike } from './types';

/** One queue of a group: its handler and the options of its Worker. */
export type QueueSpec<Payload = unknown> =
  { handler: Handler<Payload> } & Omit<WorkerOptions<Payload>, 'pool' | 'queue' | 'handler' | 'stopSignals'>;

export interface WorkerGroupOptions {
  pool: PoolLike;
  /** Queue name -> its handler and options. */
  queues: Record<string, QueueSpec<any>>;
  /** Signals that stop every queue's worker (default SIGTERM and SIGINT); [] for none. */
  stopSignals?: NodeJS.Signals[];
}

export class WorkerGroup {
  /** The Worker of each queue (for its events). */
  readonly workers: Record<string, WorkerType<any>> = {};
  private readonly stopSignals: NodeJS.Signals[];
  private stopping: Promise<void> | undefined;
  private readonly onSignal = () => void this.stop();

  constructor(options: WorkerGroupOptions) {
    const names = Object.keys(options.queues);
    if (names.length === 0) throw new RangeError('a WorkerGroup needs at least one queue');
    for (const queue of names) {
      const spec = options.queues[queue];
      this.workers[queue] = new Worker({ ...spec, pool: options.pool, queue, stopSignals: [] });
    }
    this.stopSignals = options.stopSignals ?? ['SIGTERM', 'SIGINT'];
  }

  /** Starts every queue's worker; if one fails (an unknown queue: QC001), stops the others and rejects. */
  async start(): Promise<void> {
    const results = await Promise.allSettled(Object.values(this.workers).map((w) => w.start()));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) {
      await this.stop();
      throw failure.reason;
    }
    for (const signal of this.stopSignals) process.on(signal, this.onSignal);
  }

  /** Starts, and resolves when every worker has stopped. */
  async run(): Promise<void> {
    await this.start();
    await Promise.all(Object.values(this.workers).map((w) => w.run()));
  }

  /** Stops every worker (each with its own grace); resolves when all have. */
  stop(): Promise<void> {
    if (!this.stopping) {
      for (const signal of this.stopSignals) process.removeListener(signal, this.onSignal);
      this.stopping = Promise.all(Object.values(this.workers).map((w) => w.stop())).then(() => undefined);
    }
    return this.stopping;
  }

  /** For tests: runs every queue until none has a job due or running, then stops. */
  async runUntilEmpty(): Promise<void> {
    await Promise.all(Object.values(this.workers).map((w) => w.runUntilEmpty()));
  }
}
