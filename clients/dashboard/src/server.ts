// The dashboard's HTTP server (node:http, no framework). It connects as one
// PostgreSQL role and shows and does what that role's grants allow: the pages
// read the views the server filters by privilege, and each action is a call of
// the extension's function through the Node client's admin API, which checks the queue's manage privilege itself
// (a refusal, 42501, comes back as 403 with the SQLSTATE).
//
// Security: binds 127.0.0.1 unless told otherwise, and then only with a token
// or basic-auth credentials; actions are POSTs carrying a CSRF token bound to a
// cookie; every value is escaped (html.ts); a strict Content-Security-Policy
// allows scripts, styles and fetches from this origin alone; --read-only offers
// and accepts no action.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Pool } from 'pg';
import { Inspector, JOB_STATES } from 'claimqueue';
import type { JobState } from 'claimqueue';
import { type Actions, adminActions } from './actions';
import { makePool } from './connect';
import {
  claimsPage, deadLettersPage, errorPage, jobPage, layout, locksPage, overviewPage, queuePage,
  reapersPage, schedulesPage, type PageContext,
} from './pages';

export interface DashboardOptions {
  url?: string;
  host?: string;
  port?: number;
  /** A bearer token (also accepted as the password of basic auth). */
  token?: string;
  /** "user:password" for basic auth. */
  basic?: string;
  readOnly?: boolean;
  /** Use this pool instead of one made from url. */
  pool?: Pool;
  /** Actions through this instead of the Node client's admin API (tests). */
  actions?: Actions;
}

export interface Dashboard {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
  "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
].join('; ');

class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly sqlstate: string | null = null) {
    super(message);
  }
}

/** An error from the server as an HTTP status: refusals 403, unknown objects 404, wrong states 409. */
export function statusOfSqlState(code: string | undefined): number {
  if (!code) return 500;
  if (code === '42501') return 403;
  if (code === 'QC001' || code === 'QC002' || code === 'QC006') return 404;
  if (code === 'QC004' || code === 'QC005' || code === '55006' || code === '55000') return 409;
  if (code.startsWith('22')) return 400;
  return 500;
}

function staticFiles(): Map<string, { body: Buffer; type: string }> {
  const here = path.resolve(__dirname, '..', 'static');
  const uplot = path.dirname(require.resolve('uplot/package.json'));
  const files = new Map<string, { body: Buffer; type: string }>();
  files.set('/static/app.js', { body: readFileSync(path.join(here, 'app.js')), type: 'text/javascript' });
  files.set('/static/dashboard.css', { body: readFileSync(path.join(here, 'dashboard.css')), type: 'text/css' });
  files.set('/static/uPlot.iife.min.js', { body: readFileSync(path.join(uplot, 'dist', 'uPlot.iife.min.js')), type: 'text/javascript' });
  files.set('/static/uPlot.min.css', { body: readFileSync(path.join(uplot, 'dist', 'uPlot.min.css')), type: 'text/css' });
  return files;
}

function cookies(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
  if (type !== 'application/x-www-form-urlencoded') throw new HttpError(415, 'actions take a form (application/x-www-form-urlencoded)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 65536) throw new HttpError(413, 'form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function localPath(value: string | null | undefined, fallback: string): string {
  // Only a path on this server: no scheme, no host, no "//".
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return fallback;
  return value;
}

function withFlash(target: string, flash: string): string {
  const u = new URL(target, 'http://x');
  u.searchParams.set('flash', flash);
  return u.pathname + u.search;
}

function pagePath(url: URL): string {
  const u = new URL(url.href);
  u.searchParams.delete('flash');
  return u.pathname + u.search;
}

function parseId(value: string | null | undefined): number {
  if (!value || !/^[0-9]{1,18}$/.test(value)) throw new HttpError(400, `not a job id: ${value ?? '(none)'}`);
  return Number(value);
}

export async function startDashboard(options: DashboardOptions = {}): Promise<Dashboard> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8089;
  if (!LOOPBACK.has(host) && !options.token && !options.basic) {
    throw new Error(`the dashboard binds ${host} only with --token or --basic (anyone who reaches it could act on your queues)`);
  }
  if (options.basic && !options.basic.includes(':')) throw new Error('--basic takes user:password');
  const pool = options.pool ?? makePool(options.url);
  const ownPool = !options.pool;
  const inspector = new Inspector(pool);
  await inspector.schema();  // no extension: an error now, not at the first page
  const actions = options.actions ?? adminActions(pool);
  const { rows: who } = await pool.query('SELECT current_user AS role, current_database() AS database');
  const files = staticFiles();
  const secret = randomBytes(32);
  const readOnly = options.readOnly === true;

  function authorized(req: http.IncomingMessage): boolean {
    if (!options.token && !options.basic) return true;
    const header = req.headers.authorization ?? '';
    if (options.token && header.startsWith('Bearer ') && safeEqual(header.slice(7), options.token)) return true;
    if (header.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      const user = decoded.slice(0, i);
      const password = decoded.slice(i + 1);
      if (options.basic && safeEqual(decoded, options.basic)) return true;
      if (options.token && i >= 0 && safeEqual(password, options.token) && user.length >= 0) return true;
    }
    return false;
  }

  function csrfFor(session: string): string {
    return createHmac('sha256', secret).update(session).digest('base64url');
  }

  function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) {
    res.writeHead(status, {
      'Content-Type': type,
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
      ...extra,
    });
    res.end(body);
  }

  async function page(url: URL, ctx: PageContext): Promise<{ title: string; body: import('./html').Html } | null> {
    const p = url.pathname;
    const q = url.searchParams;
    if (p === '/') return { title: 'Overview', body: overviewPage(ctx, await inspector.overview()) };
    let m = /^\/queues\/([^/]+)$/.exec(p);
    if (m) {
      const name = decodeURIComponent(m[1]);
      const settings = await inspector.queue(name);
      if (!settings) throw new HttpError(404, `no queue ${name} (or this role holds no privilege on it)`);
      const state = q.get('state') || undefined;
      if (state !== undefined && !JOB_STATES.includes(state as JobState)) throw new HttpError(400, `no such state: ${state}`);
      const id = q.get('id') ? parseId(q.get('id')) : undefined;
      const filter = { queue: name, state: state as JobState | undefined, key: q.get('key') || undefined, id, after: q.get('after') };
      let jobs;
      try {
        jobs = await inspector.jobs(filter, settings);
      } catch (err) {
        if (err instanceof RangeError) throw new HttpError(400, err.message);
        throw err;
      }
      const manage = await inspector.manageable([name]);
      return { title: `Queue ${name}`, body: queuePage(ctx, settings, manage.has(name), await inspector.schedules(name), filter, jobs) };
    }
    m = /^\/jobs\/([0-9]+)$/.exec(p);
    if (m) {
      const id = parseId(m[1]);
      const job = await inspector.job(id);
      if (!job) throw new HttpError(404, `no job ${id} (or this role holds no privilege on its queue)`);
      const manage = await inspector.manageable([job.queue]);
      return { title: `Job ${id}`, body: jobPage(ctx, job, await inspector.jobErrors(id), manage.has(job.queue)) };
    }
    if (p === '/dead-letters') {
      const state = q.get('state') || undefined;
      if (state !== undefined && state !== 'failed' && state !== 'cancelled') throw new HttpError(400, `no such dead-letter state: ${state}`);
      const filter = { queue: q.get('queue') || undefined, state: state as 'failed' | 'cancelled' | undefined, error: q.get('error') || undefined };
      let rows;
      try {
        rows = await inspector.deadLetters({ ...filter, after: q.get('after') });
      } catch (err) {
        if (err instanceof RangeError) throw new HttpError(400, err.message);
        throw err;
      }
      return { title: 'Dead letters', body: deadLettersPage(ctx, await inspector.overview(), filter, rows) };
    }
    if (p === '/schedules') {
      const rows = await inspector.schedules();
      const manage = await inspector.manageable([...new Set(rows.map((r) => r.queue))]);
      return { title: 'Schedules', body: schedulesPage(ctx, rows, manage) };
    }
    if (p === '/claims') {
      const queue = q.get('queue') || undefined;
      return { title: 'Running claims', body: claimsPage(ctx, await inspector.claims({ queue, after: q.get('after') }), queue) };
    }
    if (p === '/reapers') return { title: 'Reapers', body: reapersPage(await inspector.reapers()) };
    if (p === '/locks') return { title: 'Advisory locks', body: locksPage(await inspector.locks()) };
    return null;
  }

  async function act(url: URL, form: URLSearchParams): Promise<string> {
    const a = url.pathname.replace('/actions/', '');
    const ids = form.getAll('id');
    switch (a) {
      case 'pause':
      case 'resume': {
        const queue = form.get('queue') ?? '';
        const changed = a === 'pause' ? await actions.pause(queue) : await actions.resume(queue);
        return changed ? `${a === 'pause' ? 'Paused' : 'Resumed'} ${queue}` : `${queue} was already ${a === 'pause' ? 'paused' : 'active'}`;
      }
      case 'pause-schedule':
      case 'resume-schedule': {
        const name = form.get('schedule') ?? '';
        const pause = a === 'pause-schedule';
        const changed = pause ? await actions.pauseSchedule(name) : await actions.resumeSchedule(name);
        return changed ? `${pause ? 'Paused' : 'Resumed'} schedule ${name}` : `Schedule ${name} was already ${pause ? 'paused' : 'active'}`;
      }
      case 'retry':
      case 'cancel': {
        if (ids.length === 0) throw new HttpError(400, 'no job selected');
        const parsed = ids.map(parseId);
        for (const id of parsed) {
          if (a === 'retry') await actions.retry(id);
          else await actions.cancel(id);
        }
        return `${a === 'retry' ? 'Retried' : 'Cancelled'} ${parsed.length === 1 ? `job ${parsed[0]}` : `${parsed.length} jobs`}`;
      }
      case 'retry-jobs':
      case 'cancel-jobs': {
        const queue = form.get('queue') ?? '';
        const states = (form.get('states') ?? '').split(',').filter(Boolean);
        const count = a === 'retry-jobs' ? await actions.retryJobs(queue, states) : await actions.cancelJobs(queue, states);
        return `${a === 'retry-jobs' ? 'Retried' : 'Cancelled'} ${count} jobs of ${queue}`;
      }
      default:
        throw new HttpError(404, `no action ${a}`);
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    if (!authorized(req)) {
      send(res, 401, 'text/plain; charset=utf-8', 'credentials required\n', { 'WWW-Authenticate': 'Basic realm="claimqueue", charset="UTF-8"' });
      return;
    }
    const file = files.get(url.pathname);
    if (file && req.method === 'GET') {
      send(res, 200, file.type, file.body, { 'Cache-Control': 'max-age=300' });
      return;
    }
    let session = cookies(req).cq_session;
    const setCookie: Record<string, string> = {};
    if (!session || !/^[A-Za-z0-9_-]{20,64}$/.test(session)) {
      session = randomBytes(24).toString('base64url');
      setCookie['Set-Cookie'] = `cq_session=${session}; HttpOnly; SameSite=Strict; Path=/`;
    }
    const ctx: PageContext = {
      csrf: csrfFor(session), actions: !readOnly, flash: url.searchParams.get('flash'),
      database: who[0].database, role: who[0].role, path: pagePath(url),
    };
    try {
      if (req.method === 'POST' && url.pathname.startsWith('/actions/')) {
        if (readOnly) throw new HttpError(403, 'the dashboard runs read-only');
        // A cross-site form (Origin of another site) or one without this session's token is refused.
        const origin = req.headers.origin;
        if (origin && origin !== 'null' && new URL(origin).host !== req.headers.host) throw new HttpError(403, 'cross-origin action refused');
        const form = await readForm(req);
        const token = form.get('csrf');
        if (!token || !safeEqual(token, ctx.csrf)) throw new HttpError(403, 'CSRF token missing or wrong: reload the page and try again');
        let message: string;
        try {
          message = await act(url, form);
        } catch (err: any) {
          if (err instanceof HttpError) throw err;
          throw new HttpError(statusOfSqlState(err?.code), err?.message ?? String(err), err?.code ?? null);
        }
        const back = localPath(form.get('back'), localPath(refererPath(req), '/'));
        res.writeHead(303, { Location: withFlash(back, message), 'Cache-Control': 'no-store', ...setCookie });
        res.end();
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `${req.method} not allowed here`);
      if (url.pathname === '/api/history.json') {
        const points = await inspector.history(60);
        send(res, 200, 'application/json', JSON.stringify(points), setCookie);
        return;
      }
      if (url.pathname === '/healthz') {
        await pool.query('SELECT 1');
        send(res, 200, 'text/plain; charset=utf-8', 'ok\n');
        return;
      }
      const result = await page(url, ctx);
      if (!result) throw new HttpError(404, `no page ${url.pathname}`);
      send(res, 200, 'text/html; charset=utf-8', layout(ctx, result.title, url.pathname, result.body), setCookie);
    } catch (err: any) {
      const e = err instanceof HttpError ? err
        : new HttpError(statusOfSqlState(err?.code), err?.message ?? String(err), err?.code ?? null);
      send(res, e.status, 'text/html; charset=utf-8', errorPage(e.status, e.message, e.sqlstate), setCookie);
    }
  }

  function refererPath(req: http.IncomingMessage): string | null {
    const r = req.headers.referer;
    if (!r) return null;
    try {
      const u = new URL(r);
      return u.host === req.headers.host ? u.pathname + u.search : null;
    } catch {
      return null;
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      if (ownPool) await pool.end();
    },
  };
}
