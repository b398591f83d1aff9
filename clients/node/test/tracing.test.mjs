// OpenTelemetry: with @opentelemetry/api installed (a dev dependency here) and
// a tracer provider registered, each job runs in a span of its own.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker, ClaimQueue, enqueue } from '../dist/index.js';
import { freshDatabase, dropDatabase } from './helpers.mjs';

const require = createRequire(import.meta.url);
const otel = require('@opentelemetry/api');
const db = 'cq_node_tracing';
let pool;

// A provider that records what the worker's spans were given.
const spans = [];
const provider = {
  getTracer: () => ({
    startActiveSpan(name, options, fn) {
      const span = {
        name, kind: options.kind, attributes: { ...options.attributes }, status: null, exceptions: [], ended: false,
        setAttribute(key, value) { this.attributes[key] = value; },
        setStatus(status) { this.status = status; },
        recordException(error) { this.exceptions.push(error); },
        end() { this.ended = true; },
      };
      spans.push(span);
      return fn(span);
    },
  }),
};

test.before(async () => {
  pool = await freshDatabase(db);
  otel.trace.setGlobalTracerProvider(provider);
});
test.after(async () => {
  otel.trace.disable();
  await dropDatabase(pool, db);
});

test('each attempt runs in a CONSUMER span with the job, ended with its outcome', async () => {
  const cq = new ClaimQueue({ pool });
  await cq.createQueue('traced', { backoffBase: 0, backoffCap: 0 });
  const id = await enqueue(pool, 'traced', {});
  const worker = new Worker({
    pool, queue: 'traced', stopSignals: [], logger: null,
    handler: (job) => { if (job.attempt === 1) throw new Error('first try'); return 'ok'; },
  });
  await worker.runUntilEmpty();
  const mine = spans.filter((s) => s.attributes['messaging.message.id'] === String(id));
  assert.equal(mine.length, 2);
  for (const span of mine) {
    assert.equal(span.name, 'claimqueue.job traced');
    assert.equal(span.kind, otel.SpanKind.CONSUMER);
    assert.equal(span.attributes['messaging.system'], 'claimqueue');
    assert.equal(span.attributes['messaging.destination.name'], 'traced');
    assert.ok(span.ended);
  }
  assert.equal(mine[0].attributes['claimqueue.job.attempt'], 1);
  assert.equal(mine[0].status.code, otel.SpanStatusCode.ERROR);
  assert.equal(mine[0].exceptions[0].message, 'first try');
  assert.equal(mine[1].status.code, otel.SpanStatusCode.OK);
  // tracing: false records nothing.
  const before = spans.length;
  await enqueue(pool, 'traced', {});
  await new Worker({ pool, queue: 'traced', stopSignals: [], logger: null, tracing: false, handler: () => {} })
    .runUntilEmpty();
  assert.equal(spans.length, before);
});
