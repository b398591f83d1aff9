// OpenTelemetry spans around each job, when the application has installed
// @opentelemetry/api (an optional peer dependency): one span per attempt,
// named "claimqueue.job <queue>", kind CONSUMER, with the job's id, attempt
// and queue, ended with the handler's outcome. Without the package, or with no
// tracer provider registered, nothing is recorded.

import type { Job } from './types';

type Next = () => Promise<unknown>;
export type TracingMiddleware = (job: Job<unknown>, next: Next) => Promise<unknown>;

interface OtelSpan {
  setAttribute(key: string, value: string | number): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(error: unknown): unknown;
  end(): void;
}
interface OtelApi {
  trace: { getTracer(name: string, version?: string): {
    startActiveSpan<T>(name: string, options: { kind: number; attributes: Record<string, string | number> },
                       fn: (span: OtelSpan) => T): T;
  } };
  SpanKind: { CONSUMER: number };
  SpanStatusCode: { OK: number; ERROR: number };
}

function loadOtel(): OtelApi | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return require('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}

/** The tracing middleware, or undefined when @opentelemetry/api is not installed. */
export function otelMiddleware(queue: string): TracingMiddleware | undefined {
  const api = loadOtel();
  if (!api) return undefined;
  return (job, next) => {
    // Looked up per job: a provider registered after the worker was made is used.
    const tracer = api.trace.getTracer('claimqueue');
    return tracer.startActiveSpan(`claimqueue.job ${queue}`, {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'claimqueue',
        'messaging.destination.name': queue,
        'messaging.message.id': String(job.id),
        'claimqueue.job.attempt': job.attempt,
      },
    }, async (span) => {
      try {
        const value = await next();
        span.setStatus({ code: api.SpanStatusCode.OK });
        return value;
      } catch (err) {
        span.recordException(err);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    });
  };
}
