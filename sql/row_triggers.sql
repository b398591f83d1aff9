\i test/regress/setup.sql
-- A user's row triggers on claimqueue.jobs see every change the API makes,
-- as they would see an UPDATE's: the hot path (claims and finishes through
-- the executor's single-row path, src/engine/job_rows.hpp) fires BEFORE and
-- AFTER ROW triggers, with OLD and NEW, and a BEFORE trigger's change to NEW
-- is what gets written.
CREATE TABLE pg_temp.seen (n serial, job bigint, tg text, old_state text, new_state text,
                           new_attempt int, new_worker text);
CREATE FUNCTION pg_temp.note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.seen (job, tg, old_state, new_state, new_attempt, new_worker)
    VALUES (NEW.id, TG_WHEN, CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END, NEW.state,
            NEW.attempt, NEW.worker);
    RETURN NEW;
END $$;
CREATE FUNCTION pg_temp.stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A BEFORE trigger may change the new version: the claim's worker label.
    IF NEW.state = 'running' AND OLD.state = 'ready' THEN
        NEW.worker := NEW.worker || '+stamped';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER a_note_before BEFORE UPDATE ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note();
CREATE TRIGGER b_stamp BEFORE UPDATE ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.stamp();
CREATE TRIGGER note_after AFTER INSERT OR UPDATE ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note();
SELECT create_queue('trig', backoff_base => '0');
SELECT count(*) FROM enqueue_batch('trig', array_fill('{}'::jsonb, ARRAY[5]));
SELECT id, attempt FROM dequeue('trig', 'w', 2);
SELECT complete(1, 1);
SELECT fail(2, 1, 'boom', retry_in => '0');
SELECT heartbeat(id, attempt, '1 hour') > now() AS extended FROM dequeue('trig', 'w');
SELECT id, attempt FROM complete_and_dequeue(3, 1, 'trig', 'w');
SELECT complete_batch(ARRAY[4], ARRAY[1]);
SELECT id, state, worker FROM claimqueue.jobs ORDER BY id;
SELECT job, tg, old_state, new_state, new_attempt, new_worker FROM pg_temp.seen ORDER BY n;
DROP TRIGGER a_note_before ON claimqueue.jobs;
DROP TRIGGER b_stamp ON claimqueue.jobs;
DROP TRIGGER note_after ON claimqueue.jobs;
-- Without triggers again, the same calls work as before (the backend's
-- executor state, not kept while the table had triggers, is built anew).
SELECT id FROM dequeue('trig', 'w2');
SELECT id, state, worker FROM claimqueue.jobs WHERE id = 2;
