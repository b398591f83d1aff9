-- 0.3.0 -> 0.4.0: the duration checks of claimqueue.queues follow the API's
-- rule; queues can be paused and keep failed jobs for a retention of their
-- own.

-- Durations compare by the API's rule, extract(epoch ...): a year is 365.25
-- days, where interval's own comparison counts 360 and refused values the API
-- had accepted. Every stored value passes (the API only ever wrote values
-- that are positive, or not negative, by this rule).
ALTER TABLE claimqueue.queues
    DROP CONSTRAINT queues_lease_check,
    DROP CONSTRAINT queues_backoff_base_check,
    DROP CONSTRAINT queues_retention_check,
    DROP CONSTRAINT queues_check,
    ADD CONSTRAINT queues_lease_check CHECK (extract(epoch FROM lease) > 0),
    ADD CONSTRAINT queues_backoff_base_check CHECK (extract(epoch FROM backoff_base) >= 0),
    ADD CONSTRAINT queues_retention_check CHECK (extract(epoch FROM retention) >= 0),
    ADD CONSTRAINT queues_check
        CHECK (extract(epoch FROM backoff_cap) >= extract(epoch FROM backoff_base));

-- A claim runs no SQL statement since 0.4.0 (src/engine/job_rows.hpp): there
-- is no plan left for explain_claim() to show.
DROP FUNCTION claimqueue.explain_claim(text, integer);

-- Pausing a queue, and a retention of its own for failed jobs (NULL: the
-- queue's retention, as before).
ALTER TABLE claimqueue.queues
    ADD COLUMN paused boolean NOT NULL DEFAULT false,
    ADD COLUMN failed_retention interval
        CONSTRAINT queues_failed_retention_check
        CHECK (extract(epoch FROM failed_retention) >= 0);

-- Finished jobs by state too, so that the purge of one state does not walk
-- the jobs of another kept longer. Rebuilt: this takes a SHARE lock on
-- claimqueue.jobs while the index is built.
DROP INDEX claimqueue.jobs_finished_idx;
CREATE INDEX jobs_finished_idx ON claimqueue.jobs (queue_id, state, finished_at)
    WHERE state IN ('done', 'failed', 'cancelled');

-- create_queue() and alter_queue() take failed_retention (api/queues.sql).
DROP FUNCTION @extschema@.create_queue(text, interval, integer, interval, interval, interval, boolean);
DROP FUNCTION @extschema@.alter_queue(text, interval, integer, interval, interval, interval);
