// What the node-postgres latency benches (wait_latency.mjs, await_latency.mjs)
// share: the client library (examples/node-worker's pg), connections named
// for pg_stat_activity, and the report's percentile rows.
import { createRequire } from 'module';

const require = createRequire(new URL('../examples/node-worker/package.json', import.meta.url));
export const pg = require('pg');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function connect(name) {
  const c = new pg.Client({ application_name: name });
  await c.connect();
  return c;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// One markdown row: label, samples, p50, p99, max and mean (ms).
export function summary(label, samples) {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return `| ${label} | ${s.length} | ${percentile(s, 50).toFixed(2)} | ${percentile(s, 99).toFixed(2)} | ` +
    `${s[s.length - 1].toFixed(2)} | ${mean.toFixed(2)} |`;
}
