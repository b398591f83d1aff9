\i test/regress/setup.sql
-- A claim reads its lane in windows of positions (src/engine/job_rows.cpp,
-- LaneWindow): 8 + 2 x batch wide, then eight times that, then the rest.
-- Positions come from one counter for every lane, so a lane whose jobs were
-- enqueued between many of another queue's has gaps wider than the windows.
-- Whatever the gaps, a claim takes the lane's jobs in position order, as one
-- scan from the cursor would.
SELECT create_queue('lw');
SELECT create_queue('lw_filler');
CREATE TEMP TABLE lw_jobs (n int PRIMARY KEY, id bigint NOT NULL);
-- Gaps of 1, 40 (past the first window of a claim of one), 300 (past the
-- second) and 3,000 (past the second window of a claim of three).
INSERT INTO lw_jobs VALUES (1, enqueue('lw', '{"n": 1}'));
INSERT INTO lw_jobs VALUES (2, enqueue('lw', '{"n": 2}'));
SELECT count(*) FROM enqueue_batch('lw_filler', array_fill('{}'::jsonb, ARRAY[40]));
INSERT INTO lw_jobs VALUES (3, enqueue('lw', '{"n": 3}'));
SELECT count(*) FROM enqueue_batch('lw_filler', array_fill('{}'::jsonb, ARRAY[300]));
INSERT INTO lw_jobs VALUES (4, enqueue('lw', '{"n": 4}'));
SELECT count(*) FROM enqueue_batch('lw_filler', array_fill('{}'::jsonb, ARRAY[3000]));
INSERT INTO lw_jobs VALUES (5, enqueue('lw', '{"n": 5}'));
INSERT INTO lw_jobs VALUES (6, enqueue('lw', '{"n": 6}'));
-- The gaps are what the test needs (positions, not ids, order a lane).
SELECT n, gap >= CASE n WHEN 3 THEN 40 WHEN 4 THEN 300 WHEN 5 THEN 3000 ELSE 1 END AS gap_as_meant
FROM (SELECT l.n, j.pos - lag(j.pos) OVER (ORDER BY l.n) AS gap
      FROM lw_jobs l JOIN claimqueue.jobs j USING (id)) g
WHERE n > 1 ORDER BY n;
-- One job per claim: each claim starts at the cursor, past the jobs claimed
-- before, and finds the next job however far it is.
SELECT l.n FROM dequeue('lw', 'w1') d JOIN lw_jobs l USING (id);
SELECT l.n FROM dequeue('lw', 'w1') d JOIN lw_jobs l USING (id);
SELECT l.n FROM dequeue('lw', 'w1') d JOIN lw_jobs l USING (id);
-- Three at once, across the gap of 3,000: jobs 4, 5 and 6, in order.
SELECT l.n FROM dequeue('lw', 'w1', batch => 3) d JOIN lw_jobs l USING (id) ORDER BY d.id;
SELECT count(*) AS nothing_left FROM dequeue('lw', 'w1');
SELECT * FROM claimqueue.check_claim_cursors();
SELECT drop_queue('lw', force => true) > 0 AS dropped, drop_queue('lw_filler', force => true) AS filler_dropped;
