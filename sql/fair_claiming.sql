\i test/regress/setup.sql
-- Fair claiming: a queue with fair on rotates its claims across concurrency
-- keys (tenants) instead of taking jobs in position order. Races are in the
-- isolation specs fair_claiming and fair_held_snapshot; test/stress/fair.sh
-- counts every job of a fair queue under 16 workers.
SELECT create_queue('fair', fair => true);
SELECT queue, fair FROM queue_settings WHERE queue IN ('default', 'fair') ORDER BY 1;

-- One session's claims in order: which tenant each one took.
CREATE FUNCTION pg_temp.claim_order(queue text, claims int, batch int DEFAULT 1)
RETURNS TABLE (claim int, tenant text) LANGUAGE plpgsql AS $$
DECLARE
    n int := 0;
    j record;
BEGIN
    FOR i IN 1..claims LOOP
        FOR j IN SELECT d.id FROM dequeue(queue, 'w', batch => batch) d ORDER BY d.id LOOP
            n := n + 1;
            claim := n;
            SELECT coalesce(x.concurrency_key, '(none)') INTO tenant
              FROM claimqueue.jobs x WHERE x.id = j.id;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END $$;

-- The issue's measure: 100,000 jobs of tenant a enqueued before 10 of tenant
-- b. Claimed one at a time, all of b's are among the first 100 claims (the
-- rotation alternates a and b, so b's last is claim 19 or 20: tenants come in
-- the order of a hash of their key, here b first).
SELECT count(*) FROM (SELECT enqueue_batch('fair', array_agg('{}'::jsonb), concurrency_key => 'a')
                        FROM generate_series(1, 100000)) s;
SELECT count(*) FROM (SELECT enqueue_batch('fair', array_agg(jsonb_build_object('b', g)),
                                           concurrency_key => 'b')
                        FROM generate_series(1, 10) g) s;
CREATE TEMP TABLE first_100 AS SELECT * FROM pg_temp.claim_order('fair', 100);
SELECT count(*) FILTER (WHERE tenant = 'b') AS b_claimed, max(claim) FILTER (WHERE tenant = 'b') AS last_b,
       count(*) AS claims
  FROM first_100;
SELECT string_agg(tenant, ' ' ORDER BY claim) FROM first_100 WHERE claim <= 24;
-- The same backlog in a queue that is not fair: b waits behind all of a.
SELECT create_queue('fifo');
SELECT count(*) FROM (SELECT enqueue_batch('fifo', array_agg('{}'::jsonb), concurrency_key => 'a')
                        FROM generate_series(1, 1000)) s;
SELECT enqueue('fifo', '{}', concurrency_key => 'b');
SELECT count(*) FILTER (WHERE tenant = 'b') AS b_claimed FROM pg_temp.claim_order('fifo', 100);

-- Priority comes first: a higher priority is claimed before any tenant's
-- lower one; within a priority, claims rotate. Jobs without a key are one
-- tenant more, after the keys (in their hash order: c, b, a).
SELECT create_queue('mix', fair => true);
SELECT enqueue('mix', '{}', concurrency_key => k) FROM unnest(ARRAY['c', 'c', 'c', 'a', 'a', 'b']) k;
SELECT enqueue('mix', '{}') FROM generate_series(1, 2);
SELECT enqueue('mix', '{}', concurrency_key => 'c', priority => 5);
SELECT enqueue('mix', '{}', priority => 5);
SELECT string_agg(tenant, ' ' ORDER BY claim) FROM pg_temp.claim_order('mix', 12);
-- Within a tenant, jobs go in position order (FIFO).
SELECT create_queue('order', fair => true);
SELECT enqueue('order', jsonb_build_object('n', g), concurrency_key => 'k' || (g % 2))
  FROM generate_series(1, 6) g;
SELECT string_agg(d.payload->>'n', ' ' ORDER BY i) AS n_in_claim_order
  FROM generate_series(1, 6) i, LATERAL (SELECT * FROM dequeue('order', 'w' || i)) d;

-- A batch rotates too: one job per tenant per turn, until the batch is full
-- or no tenant has a claimable job left.
SELECT create_queue('batch', fair => true);
SELECT enqueue('batch', '{}', concurrency_key => k) FROM unnest(ARRAY['x', 'x', 'x', 'x', 'y']) k;
SELECT string_agg(coalesce(j.concurrency_key, '(none)'), ' ' ORDER BY d.n) AS in_claim_order,
       count(*)
  FROM dequeue('batch', 'w', batch => 10) WITH ORDINALITY d(id, payload, attempt, max_attempts,
                                                            priority, lease_expires_at,
                                                            created_at, n)
  JOIN claimqueue.jobs j USING (id);
-- The rotation continues where the last claim stopped, across calls.
SELECT enqueue('batch', '{}', concurrency_key => k) FROM unnest(ARRAY['x', 'y', 'z', 'x', 'y', 'z']) k;
SELECT string_agg(tenant, ' ' ORDER BY claim) FROM pg_temp.claim_order('batch', 3);
SELECT string_agg(tenant, ' ' ORDER BY claim) FROM pg_temp.claim_order('batch', 3);

-- With max_running_per_key: a full tenant is passed over, the rotation goes on.
SELECT create_queue('limited', fair => true, max_running_per_key => 1);
SELECT enqueue('limited', '{}', concurrency_key => k) FROM unnest(ARRAY['p', 'p', 'p', 'q', 'q', 'r']) k;
SELECT string_agg(coalesce(j.concurrency_key, '(none)'), ' ' ORDER BY j.concurrency_key) AS claimed
  FROM dequeue('limited', 'w', batch => 10) d JOIN claimqueue.jobs j USING (id);
SELECT count(*) FROM dequeue('limited', 'w', batch => 10);
-- A held-back tenant's jobs are not lost: complete one and its next is claimed.
SELECT complete(id, attempt) FROM claimqueue.jobs
 WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'limited')
   AND state = 'running' AND concurrency_key = 'p';
SELECT j.concurrency_key FROM dequeue('limited', 'w', batch => 10) d JOIN claimqueue.jobs j USING (id);

-- A tenant at its limit is passed over after its first entry, however many
-- jobs it has ready: 5,000 of p at max_running_per_key 1, one of q.
SELECT create_queue('deep', fair => true, max_running_per_key => 1);
SELECT count(*) FROM (SELECT enqueue_batch('deep', array_agg('{}'::jsonb), concurrency_key => 'p')
                        FROM generate_series(1, 5000)) s;
SELECT count(*) FROM (SELECT enqueue('deep', '{}', concurrency_key => 'q')) s;
SELECT count(*) FROM dequeue('deep', 'w', batch => 10);
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT count(*) FROM dequeue('deep', 'w', batch => 10);
SELECT pg_stat_get_xact_tuples_returned('claimqueue.jobs_fair_idx'::regclass) < 20 AS few_entries_read;
COMMIT;

-- complete_and_dequeue and a paused fair queue.
SELECT enqueue('mix', '{}', concurrency_key => k) FROM unnest(ARRAY['a', 'b']) k;
SELECT pause_queue('mix');
SELECT count(*) FROM dequeue('mix', 'w');
SELECT resume_queue('mix');
SELECT count(*) FROM complete_and_dequeue(NULL, NULL, 'mix', 'w', batch => 5);

-- alter_queue turns it off (position order again) and on; NULL leaves it.
SELECT alter_queue('batch', fair => false);
SELECT enqueue('batch', '{}', concurrency_key => k) FROM unnest(ARRAY['x', 'x', 'y']) k;
SELECT string_agg(tenant, ' ' ORDER BY claim) FROM pg_temp.claim_order('batch', 3);
SELECT alter_queue('batch', fair => true);
SELECT alter_queue('batch', lease => '1 minute');
SELECT queue, fair, lease FROM queue_settings WHERE queue = 'batch';

-- Nothing was lost or claimed twice: every job of every queue is ready or
-- running once, attempt 1 at most.
SELECT q.name, count(*) AS jobs, count(*) FILTER (WHERE j.state = 'running') AS running,
       max(j.attempt) AS max_attempt
  FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
 GROUP BY 1 ORDER BY 1;
SELECT * FROM claimqueue.check_claim_cursors();
