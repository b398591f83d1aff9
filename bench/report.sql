-- Ratios and markdown tables of one benchmark run (called by bench/inner.sh with
-- psql -At, after report_raw and report_windows are loaded; variables: mode, window).
--
-- Every ratio is between rows of the same synchronous_commit mode (column sync:
-- off shows CPU cost, on the durable figure).
-- ratio to ceiling = pgbench loops/s of the workload ÷ loops/s of the ceiling with
--   the same number of commits per loop, at the same client count:
--   drain (claim; complete) and batch (claim 100; complete them): 2 commits -> commit2;
--   one commit per job (BEGIN; claim; complete; COMMIT) and one call per job
--   (complete_and_dequeue() in autocommit): 1 commit -> commit1.
-- ratio to plain = jobs/s ÷ jobs/s of the plain-SQL baseline in the same workload
--   and client count (held rows: the same window; one call per job: plain's one
--   commit per job).

CREATE VIEW report_results AS
WITH r AS (
    SELECT r.*,
           CASE r.workload WHEN 'commit1' THEN 1 WHEN 'commit2' THEN 2 END AS commits_per_loop
    FROM report_raw r
)
SELECT r.ord, r.section, r.sync, r.workload, r.impl, r.clients, r.duration_s, r.loops,
       round(r.loops_per_s, 1) AS loops_per_s,
       r.jobs, round(r.jobs_per_s, 1) AS jobs_per_s,
       round(r.loops_per_s * r.commits_per_loop, 1) AS commits_per_s,
       r.ceiling_ref,
       round(c.loops_per_s, 1) AS ceiling_loops_per_s,
       round(r.loops_per_s / nullif(c.loops_per_s, 0), 3) AS ratio_to_ceiling,
       round(p.jobs_per_s, 1) AS plain_jobs_per_s,
       round(r.jobs_per_s / nullif(p.jobs_per_s, 0), 3) AS ratio_to_plain,
       r.backlog_left,
       concat_ws('; ', nullif(r.note, ''),
                 CASE WHEN r.workload = 'held_last_window' AND f.jobs_per_s > 0
                      THEN round(100 * r.jobs_per_s / f.jobs_per_s) || ' % of the first window' END)
           AS note
FROM r
LEFT JOIN report_raw c ON c.section = 'ceiling' AND c.workload = r.ceiling_ref AND c.clients = r.clients
                      AND c.sync = r.sync
LEFT JOIN report_raw p ON r.section <> 'ceiling' AND p.impl = 'plain'
                      AND p.section = r.section AND p.clients = r.clients AND p.sync = r.sync
                      -- complete_and_dequeue() has no plain twin: plain's one commit per job
                      AND p.workload = CASE r.workload WHEN 'one_call_per_job' THEN 'one_commit_per_job'
                                                       ELSE r.workload END
LEFT JOIN report_raw f ON r.workload = 'held_last_window' AND f.workload = 'held_first_window'
                      AND f.impl = r.impl;

CREATE FUNCTION pg_temp.n(x numeric) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT coalesce(to_char(x, 'FM999,999,990'), '') $$;
CREATE FUNCTION pg_temp.r(x numeric) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT coalesce(to_char(x, 'FM990.00'), '') $$;

SELECT '| sync | workload | impl | clients | T (s) | loops/s (tps) | jobs/s | ratio to ceiling | ratio to plain | backlog left | note |';
SELECT '|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |',
              sync, workload, impl, clients, duration_s,
              pg_temp.n(loops_per_s), pg_temp.n(jobs_per_s),
              CASE WHEN ratio_to_ceiling IS NOT NULL THEN pg_temp.r(ratio_to_ceiling) || ' (' || ceiling_ref || ')' ELSE '' END,
              CASE WHEN impl IN ('claimqueue', 'floor', 'pgmq') THEN pg_temp.r(ratio_to_plain) ELSE '' END,
              pg_temp.n(backlog_left),
              concat_ws('; ', CASE WHEN commits_per_s IS NOT NULL THEN pg_temp.n(commits_per_s) || ' commits/s' END,
                        nullif(note, '')))
FROM report_results ORDER BY ord;

SELECT '' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT '### Held snapshot, per ' || :'window' || '-s window' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT '' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT 'jobs/s = jobs completed in the window (count of done rows, sampled), pgbench tps = the consumers'' '
    || 'loops/s from --progress (a loop claims and completes one job), backlog = ready jobs at the end of the window, '
    || 'dead = n_dead_tup of the queue table (pgstat, lags a little).' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT '' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT '| t (s) | claimqueue jobs/s | pgbench tps | lat ms | backlog | dead | MB | plain jobs/s | pgbench tps | lat ms | backlog | dead | MB | claimqueue ÷ plain |' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|' WHERE EXISTS (SELECT 1 FROM report_windows);
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |',
              coalesce(c.t_s, p.t_s),
              pg_temp.n(c.jobs_per_s), pg_temp.n(c.consumer_tps), c.consumer_lat_ms, pg_temp.n(c.backlog_ready),
              pg_temp.n(c.dead_tuples), c.table_mb,
              pg_temp.n(p.jobs_per_s), pg_temp.n(p.consumer_tps), p.consumer_lat_ms, pg_temp.n(p.backlog_ready),
              pg_temp.n(p.dead_tuples), p.table_mb,
              pg_temp.r(c.jobs_per_s / nullif(p.jobs_per_s, 0)))
FROM (SELECT * FROM report_windows WHERE impl = 'claimqueue') c
FULL JOIN (SELECT * FROM report_windows WHERE impl = 'plain') p USING (window_no)
ORDER BY window_no;
