// The dashboard's pages, rendered on the server. Every value goes through
// html`` (escaped); the only script is static/app.js (live updates, the
// chart), allowed by the Content-Security-Policy as 'self'.

import type {
  JobAttemptError, JobDetail, JobFilter, JobRow, LockRow, Page, QueueOverview, QueueSettings,
  ReaperRow, ScheduleRow,
} from 'claimqueue';
import { Html, href, html } from './html';

export interface PageContext {
  /** The CSRF token the action forms carry. */
  csrf: string;
  /** False in --read-only mode: no action is offered (nor accepted). */
  actions: boolean;
  flash?: string | null;
  error?: string | null;
  database: string;
  role: string;
  /** This page's path and query: where an action comes back to. */
  path: string;
}

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/dead-letters', 'Dead letters'],
  ['/schedules', 'Schedules'],
  ['/claims', 'Running claims'],
  ['/reapers', 'Reapers'],
  ['/locks', 'Advisory locks'],
];

export function layout(ctx: PageContext, title: string, path: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${ctx.csrf}">
<title>${title} · claimqueue</title>
<link rel="stylesheet" href="/static/dashboard.css">
<link rel="stylesheet" href="/static/uPlot.min.css">
<link rel="icon" href="data:,">
<script src="/static/uPlot.iife.min.js" defer></script>
<script src="/static/app.js" defer></script>
</head>
<body>
<header>
<a class="brand" href="/">claimqueue</a>
<nav>${NAV.map(([p, label]) => html`<a href="${p}"${p === path ? html` class="current"` : ''}>${label}</a>`)}</nav>
<span class="who">${ctx.role}@${ctx.database}${ctx.actions ? '' : html` <span class="badge">read-only</span>`}</span>
</header>
<main id="main">
${ctx.flash ? html`<p class="flash" role="status">${ctx.flash}</p>` : ''}
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<h1>${title}</h1>
${body}
</main>
<footer><label><input type="checkbox" id="live" checked> live updates every 5 s</label></footer>
</body>
</html>
`.text;
}

/** A POST form with the CSRF token: one button, hidden fields. */
export function actionForm(ctx: PageContext, action: string, fields: Record<string, unknown>, label: string,
  cls = ''): Html {
  return html`<form method="post" action="${action}" class="inline">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${'back' in fields ? '' : html`<input type="hidden" name="back" value="${ctx.path}">`}
${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<button type="submit" class="${cls}" data-action="${action.replace('/actions/', '')}">${label}</button>
</form>`;
}

function age(seconds: number | null): string {
  if (seconds === null) return '–';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function when(d: Date | null | undefined): Html {
  if (!d) return html`–`;
  return html`<time datetime="${d.toISOString()}">${d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

function n(v: number | null): string {
  return v === null ? '–' : v.toLocaleString('en');
}

export function overviewPage(ctx: PageContext, queues: QueueOverview[]): Html {
  return html`
<section data-live id="queues">
<table>
<thead><tr><th>queue</th><th>state</th><th class="num">ready</th><th class="num">running</th>
<th class="num">oldest ready</th><th class="num">completed</th><th class="num">failed</th>
<th class="num">retried</th><th class="num">cancelled</th><th>limits</th><th></th></tr></thead>
<tbody>
${queues.map((q) => html`<tr data-queue="${q.queue}">
<td><a href="${href('/queues/' + encodeURIComponent(q.queue))}">${q.queue}</a></td>
<td>${q.paused ? html`<span class="badge paused">paused</span>` : 'active'}</td>
<td class="num">${n(q.readyOrScheduled)}</td><td class="num">${n(q.running)}</td>
<td class="num">${age(q.oldestReadyAge)}</td><td class="num">${n(q.completed)}</td>
<td class="num">${n(q.failed)}</td><td class="num">${n(q.retried)}</td><td class="num">${n(q.cancelled)}</td>
<td>${q.maxRunning !== null ? `max ${q.maxRunning}` : ''}${q.maxRunningPerKey !== null ? ` · ${q.maxRunningPerKey}/key` : ''}${q.fair ? ' · fair' : ''}</td>
<td>${ctx.actions && q.canManage
    ? (q.paused ? actionForm(ctx, '/actions/resume', { queue: q.queue }, 'Resume')
      : actionForm(ctx, '/actions/pause', { queue: q.queue }, 'Pause'))
    : ''}</td>
</tr>`)}
</tbody>
</table>
<p class="note">Totals since ${when(queues.find((q) => q.countersSince)?.countersSince ?? null)} (queue_metrics); ready counts delayed jobs too.</p>
</section>
<section>
<h2>Throughput, last hour (jobs completed per minute)</h2>
<div id="throughput" class="chart" data-src="/api/history.json"></div>
<p class="note">From queue_history: the reaper samples queue_metrics about once a minute.</p>
</section>`;
}

const STATES = ['', 'ready', 'scheduled', 'running', 'done', 'failed', 'cancelled'];

export function jobsTable(ctx: PageContext, rows: JobRow[], manage: Set<string>, selectable: boolean): Html {
  return html`<table class="jobs">
<thead><tr>${selectable ? html`<th></th>` : ''}<th class="num">id</th><th>queue</th><th>state</th><th class="num">attempt</th>
<th>key</th><th>created</th><th>finished / lease end</th><th>worker</th><th>last error</th><th></th></tr></thead>
<tbody>
${rows.map((j) => html`<tr data-job="${j.id}" data-state="${j.state}">
${selectable ? html`<td>${ctx.actions && manage.has(j.queue) ? html`<input type="checkbox" name="id" value="${j.id}" form="bulk">` : ''}</td>` : ''}
<td class="num"><a href="/jobs/${j.id}">${j.id}</a></td>
<td>${j.queue}</td><td><span class="state ${j.state}">${j.state}</span></td>
<td class="num">${j.attempt}/${j.maxAttempts}</td>
<td>${j.dedupKey ?? j.concurrencyKey ?? ''}</td>
<td>${when(j.createdAt)}</td><td>${when(j.finishedAt ?? j.leaseExpiresAt)}</td>
<td>${j.worker ?? ''}</td>
<td class="err">${j.lastError ?? ''}</td>
<td>${jobActions(ctx, j, manage.has(j.queue))}</td>
</tr>`)}
</tbody>
</table>`;
}

function jobActions(ctx: PageContext, j: JobRow, canManage: boolean): Html {
  if (!ctx.actions || !canManage) return html``;
  if (j.state === 'failed' || j.state === 'cancelled') return actionForm(ctx, '/actions/retry', { id: j.id }, 'Retry');
  if (j.state === 'ready' || j.state === 'running') return actionForm(ctx, '/actions/cancel', { id: j.id }, 'Cancel', 'danger');
  return html``;
}

function pager(path: string, query: Record<string, unknown>, next: string | null): Html {
  return next ? html`<p class="pager"><a href="${href(path, { ...query, after: next })}" rel="next">Next page →</a></p>` : html``;
}

export function queuePage(ctx: PageContext, settings: QueueSettings, canManage: boolean, schedules: ScheduleRow[],
  filter: JobFilter, page: Page<JobRow>): Html {
  const path = '/queues/' + encodeURIComponent(settings.queue);
  const manage = new Set(canManage ? [settings.queue] : []);
  return html`
<section class="settings">
<dl>
<dt>state</dt><dd>${settings.paused ? html`<span class="badge paused">paused</span>` : 'active'}
${ctx.actions && canManage ? (settings.paused ? actionForm(ctx, '/actions/resume', { queue: settings.queue }, 'Resume')
    : actionForm(ctx, '/actions/pause', { queue: settings.queue }, 'Pause')) : ''}</dd>
<dt>lease</dt><dd>${settings.lease}</dd>
<dt>max attempts</dt><dd>${settings.maxAttempts}</dd>
<dt>backoff</dt><dd>${settings.backoffBase} to ${settings.backoffCap}</dd>
<dt>retention</dt><dd>${settings.retention}${settings.failedRetention ? ` (failed: ${settings.failedRetention})` : ''}</dd>
<dt>limits</dt><dd>${settings.maxRunning ?? 'none'} running${settings.maxRunningPerKey ? `, ${settings.maxRunningPerKey} per key` : ''}${settings.fair ? ', fair' : ''}</dd>
<dt>created</dt><dd>${when(settings.createdAt)}</dd>
</dl>
</section>
<section>
<h2>Schedules</h2>
${schedules.length === 0 ? html`<p class="note">None.</p>` : schedulesTable(ctx, schedules, manage)}
</section>
<section>
<h2>Jobs</h2>
<form method="get" action="${path}" class="filter">
<label>state <select name="state">${STATES.map((s) => html`<option value="${s}"${s === (filter.state ?? '') ? html` selected` : ''}>${s || 'any'}</option>`)}</select></label>
<label>key <input name="key" value="${filter.key ?? ''}"></label>
<label>id <input name="id" inputmode="numeric" value="${filter.id ?? ''}"></label>
<button type="submit">Filter</button>
</form>
<div data-live id="jobs">
${jobsTable(ctx, page.rows, manage, false)}
${page.rows.length === 0 ? html`<p class="note">No jobs.</p>` : ''}
</div>
${pager(path, { state: filter.state, key: filter.key, id: filter.id }, page.next)}
</section>`;
}

export function jobPage(ctx: PageContext, job: JobDetail, errors: JobAttemptError[], canManage: boolean): Html {
  const events: [string, Date | null][] = [
    ['created', job.createdAt], ['due', job.runAt], ['started', job.startedAt],
    ['lease ends', job.state === 'running' ? job.leaseExpiresAt : null], ['finished', job.finishedAt],
  ];
  return html`
<section data-live id="job">
<dl>
<dt>queue</dt><dd><a href="/queues/${encodeURIComponent(job.queue)}">${job.queue}</a></dd>
<dt>state</dt><dd><span class="state ${job.state}">${job.state}</span> ${jobActions(ctx, job, canManage)}</dd>
<dt>attempt</dt><dd>${job.attempt} of ${job.maxAttempts}</dd>
<dt>priority</dt><dd>${job.priority}</dd>
<dt>worker</dt><dd>${job.worker ?? '–'}${job.sessionBound ? ' (claim ends with its session)' : ''}</dd>
<dt>dedup key</dt><dd>${job.dedupKey ?? '–'}</dd>
<dt>concurrency key</dt><dd>${job.concurrencyKey ?? '–'}</dd>
</dl>
<h2>Timeline</h2>
<ol class="timeline">${events.filter(([, d]) => d).sort((a, b) => a[1]!.getTime() - b[1]!.getTime())
    .map(([label, d]) => html`<li>${when(d)} ${label}</li>`)}</ol>
<h2>Payload</h2>
<pre class="payload">${JSON.stringify(job.payload, null, 2)}</pre>
<h2>Result</h2>
<pre class="result">${job.result === null ? '–' : JSON.stringify(job.result, null, 2)}</pre>
<h2>Errors</h2>
${errors.length === 0 ? html`<p class="note">None.</p>` : html`<table>
<thead><tr><th class="num">attempt</th><th>failed at</th><th>error</th></tr></thead>
<tbody>${errors.map((e) => html`<tr><td class="num">${e.attempt}</td><td>${when(e.failedAt)}</td><td class="err"><pre>${e.error ?? ''}${e.detail ? '\n' + JSON.stringify(e.detail, null, 2) : ''}</pre></td></tr>`)}</tbody>
</table>`}
</section>`;
}

export function deadLettersPage(ctx: PageContext, queues: QueueOverview[], filter: { queue?: string; state?: string; error?: string },
  page: Page<JobRow>): Html {
  const manage = new Set(queues.filter((q) => q.canManage).map((q) => q.queue));
  const bulkQueue = filter.queue && manage.has(filter.queue) ? filter.queue : null;
  const states = filter.state ? [filter.state] : ['failed', 'cancelled'];
  return html`
<form method="get" action="/dead-letters" class="filter">
<label>queue <select name="queue"><option value="">any</option>${queues.map((q) => html`<option${q.queue === filter.queue ? html` selected` : ''}>${q.queue}</option>`)}</select></label>
<label>state <select name="state">${['', 'failed', 'cancelled'].map((s) => html`<option value="${s}"${s === (filter.state ?? '') ? html` selected` : ''}>${s || 'failed or cancelled'}</option>`)}</select></label>
<label>error contains <input name="error" value="${filter.error ?? ''}"></label>
<button type="submit">Filter</button>
</form>
${ctx.actions && manage.size > 0 ? html`<form method="post" id="bulk" class="bulk">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="back" value="${href('/dead-letters', filter)}">
<button type="submit" formaction="/actions/retry" data-action="retry-selected">Retry selected</button>
<button type="submit" formaction="/actions/cancel" data-action="cancel-selected" class="danger">Cancel selected</button>
</form>` : ''}
${ctx.actions && bulkQueue ? html`<div class="bulk">${actionForm(ctx, '/actions/retry-jobs', { queue: bulkQueue, states: states.join(','), back: href('/dead-letters', filter) },
    `Retry every ${states.join(' or ')} job of ${bulkQueue}`)}</div>` : ''}
${jobsTable(ctx, page.rows, manage, true)}
${page.rows.length === 0 ? html`<p class="note">No dead letters.</p>` : ''}
${pager('/dead-letters', filter, page.next)}`;
}

function schedulesTable(ctx: PageContext, rows: ScheduleRow[], manage: Set<string>): Html {
  return html`<table>
<thead><tr><th>name</th><th>queue</th><th>cron</th><th>time zone</th><th>next run</th><th>last run</th><th>last job</th><th>state</th><th>catch-up</th></tr></thead>
<tbody>${rows.map((s) => html`<tr data-schedule="${s.name}"><td>${s.name}</td><td><a href="/queues/${encodeURIComponent(s.queue)}">${s.queue}</a></td>
<td><code>${s.cron}</code></td><td>${s.timezone}</td><td>${when(s.nextRunAt)}</td><td>${when(s.lastRunAt)}</td>
<td>${s.lastJobId !== null ? html`<a href="/jobs/${s.lastJobId}">${s.lastJobId}</a>` : '–'}</td>
<td>${s.paused ? html`<span class="badge paused">paused</span>` : s.enabled ? 'active' : html`<span class="badge paused">disabled</span>`}
${scheduleAction(ctx, s, manage.has(s.queue))}</td><td>${s.catchUp}</td></tr>`)}</tbody>
</table>`;
}

// Pause or resume: only for a role that manages the schedule's queue, never read-only.
function scheduleAction(ctx: PageContext, s: ScheduleRow, canManage: boolean): Html {
  if (!ctx.actions || !canManage) return html``;
  return s.paused ? actionForm(ctx, '/actions/resume-schedule', { schedule: s.name }, 'Resume')
    : actionForm(ctx, '/actions/pause-schedule', { schedule: s.name }, 'Pause');
}

export function schedulesPage(ctx: PageContext, rows: ScheduleRow[], manage: Set<string>): Html {
  return html`<div data-live id="schedules">${rows.length === 0 ? html`<p class="note">No schedules.</p>` : schedulesTable(ctx, rows, manage)}</div>`;
}

export function claimsPage(ctx: PageContext, page: Page<JobRow>, queue?: string): Html {
  return html`<div data-live id="claims"><table>
<thead><tr><th class="num">id</th><th>queue</th><th>worker</th><th class="num">attempt</th><th>started</th><th>lease ends</th><th>session-bound</th></tr></thead>
<tbody>${page.rows.map((j) => html`<tr data-job="${j.id}"><td class="num"><a href="/jobs/${j.id}">${j.id}</a></td><td>${j.queue}</td><td>${j.worker ?? ''}</td>
<td class="num">${j.attempt}</td><td>${when(j.startedAt)}</td><td>${when(j.leaseExpiresAt)}</td><td>${j.sessionBound ? 'yes' : 'no'}</td></tr>`)}</tbody>
</table>
${page.rows.length === 0 ? html`<p class="note">No running claims.</p>` : ''}
</div>
${pager('/claims', { queue }, page.next)}
${ctx.actions ? '' : ''}`;
}

export function reapersPage(rows: ReaperRow[]): Html {
  return html`<div data-live id="reapers"><table>
<thead><tr><th>database</th><th>state</th><th class="num">pid</th><th>started</th><th>last pass</th><th class="num">passes</th><th class="num">reaped</th><th class="num">purged</th><th>last error</th></tr></thead>
<tbody>${rows.map((r) => html`<tr data-database="${r.database}"><td>${r.database}</td><td>${r.state}</td><td class="num">${r.pid ?? '–'}</td><td>${when(r.startedAt)}</td>
<td>${when(r.lastPassAt)}</td><td class="num">${n(r.passes)}</td><td class="num">${n(r.jobsReaped)}</td><td class="num">${n(r.jobsPurged)}</td><td class="err">${r.lastError ?? ''}</td></tr>`)}</tbody>
</table>
<p class="note">Every database's reaper, from the launcher's shared memory (all_reaper_stats). Another database's start, passes, counters and last error show only to a role with pg_read_all_stats, as pg_stat_activity shows other roles' sessions.</p></div>`;
}

export function locksPage(rows: LockRow[]): Html {
  const byNamespace = new Map<string, LockRow[]>();
  for (const r of rows) byNamespace.set(r.namespace, [...(byNamespace.get(r.namespace) ?? []), r]);
  return html`<div data-live id="locks">${rows.length === 0 ? html`<p class="note">No advisory lock held or awaited in a registered namespace.</p>` : ''}
${[...byNamespace.entries()].map(([ns, locks]) => html`<h2>${ns} <span class="note">(${locks[0].keyMode}, ${locks.length})</span></h2>
<table><thead><tr><th>key</th><th>mode</th><th>granted</th><th class="num">pid</th><th>application</th><th>waiting since</th></tr></thead>
<tbody>${locks.map((l) => html`<tr><td>${l.key ?? ''}</td><td>${l.mode}</td><td>${l.granted ? 'yes' : 'waiting'}</td><td class="num">${l.pid}</td><td>${l.applicationName ?? ''}</td><td>${when(l.waitStart)}</td></tr>`)}</tbody></table>`)}</div>`;
}

export function errorPage(status: number, message: string, sqlstate?: string | null): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status}</title>
<link rel="stylesheet" href="/static/dashboard.css"></head><body><main>
<h1>${status}</h1><p class="error" role="alert">${message}</p>${sqlstate ? html`<p>SQLSTATE <code class="sqlstate">${sqlstate}</code></p>` : ''}
<p><a href="/">Overview</a></p></main></body></html>`.text;
}
