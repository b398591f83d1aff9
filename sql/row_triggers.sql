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
SELECT count(*) FROM enqueue_batch('trig', array_fill('{}'::jsonb, ARRAY[4]));
-- enqueue() of one job too: with a trigger on the table it runs an INSERT.
SELECT enqueue('trig');
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
-- UPDATE OF column triggers fire as for an UPDATE whose SET list names the
-- columns the call changes: a claim sets state, attempt, worker, started_at
-- and lease_expires_at; complete sets state, finished_at and lease_expires_at.
-- No call changes the payload.
CREATE TABLE pg_temp.column_seen (n serial, job bigint, tg text, new_state text);
CREATE FUNCTION pg_temp.note_column() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.column_seen (job, tg, new_state) VALUES (NEW.id, TG_NAME, NEW.state);
    RETURN NEW;
END $$;
CREATE TRIGGER of_state AFTER UPDATE OF state ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note_column();
CREATE TRIGGER of_worker AFTER UPDATE OF worker ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note_column();
CREATE TRIGGER of_payload AFTER UPDATE OF payload ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note_column();
SELECT create_queue('trig_cols');
SELECT enqueue('trig_cols', '{}') AS job \gset
SELECT id = :job AS claimed, attempt FROM dequeue('trig_cols', 'w3');
SELECT complete(:job, 1);
SELECT job = :job AS this_job, tg, new_state FROM pg_temp.column_seen ORDER BY n;
DROP TRIGGER of_state ON claimqueue.jobs;
DROP TRIGGER of_worker ON claimqueue.jobs;
DROP TRIGGER of_payload ON claimqueue.jobs;
-- enqueue() runs no INSERT on a table without triggers. With any trigger on
-- it, it runs one, so a statement-level INSERT trigger fires for each
-- enqueue() (dequeue() and the finishing calls fire none).
CREATE TABLE pg_temp.statements_seen (n serial, tg text);
CREATE FUNCTION pg_temp.note_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.statements_seen (tg) VALUES (TG_OP || ' ' || TG_LEVEL);
    RETURN NULL;
END $$;
CREATE TRIGGER each_statement AFTER INSERT OR UPDATE ON claimqueue.jobs
    FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.note_statement();
SELECT enqueue('trig_cols') AS job \gset
SELECT complete(id, attempt) FROM dequeue('trig_cols', 'w4');
SELECT tg FROM pg_temp.statements_seen ORDER BY n;
DROP TRIGGER each_statement ON claimqueue.jobs;
SELECT enqueue('trig_cols') > :job AS enqueued_without_trigger;
SELECT count(*) AS statements FROM pg_temp.statements_seen;
-- A BEFORE row trigger that returns NULL skips the write, as it would an
-- UPDATE's or an INSERT's. A skipped claim is no claim: the job stays ready
-- (locked by the claiming transaction until it ends) and the claim goes on
-- to the next one. A skipped finish (complete, complete_batch,
-- complete_and_dequeue, fail, heartbeat, cancel, retry) raises 09000 and
-- changes nothing: the job is still running under its attempt.
CREATE TABLE pg_temp.vetoed (worker text);
CREATE FUNCTION pg_temp.veto() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_temp.vetoed v WHERE v.worker = NEW.worker) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER veto BEFORE UPDATE ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.veto();
SELECT create_queue('veto', max_attempts => 1);
SELECT min(id) AS v FROM enqueue_batch('veto', ARRAY['{}', '{}']::jsonb[]) id \gset
INSERT INTO pg_temp.vetoed VALUES ('vetoed');
-- Every claim by worker 'vetoed' is skipped: nothing is returned, twice
-- (it returned the same job under the same attempt each time).
SELECT count(*) AS claimed FROM dequeue('veto', 'vetoed', 2);
SELECT count(*) AS claimed FROM dequeue('veto', 'vetoed');
CALL dequeue_wait('veto', 'vetoed', wait => '0') \gset
SELECT :'jobs' AS dequeue_wait_claimed;
SELECT id - :v AS nth, state, attempt FROM claimqueue.jobs WHERE id >= :v ORDER BY id;
SELECT id - :v AS nth, attempt FROM dequeue('veto', 'w', 2);
-- Now the updates of worker w's jobs are skipped.
INSERT INTO pg_temp.vetoed VALUES ('w');
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err(format('SELECT complete(%s, 1)', :v));
SELECT pg_temp.err(format('SELECT complete_batch(ARRAY[%s], ARRAY[1])', :v));
SELECT pg_temp.err(format($$SELECT * FROM complete_and_dequeue(%s, 1, 'veto', 'x')$$, :v));
SELECT pg_temp.err(format($$SELECT fail(%s, 1, 'boom')$$, :v));
SELECT pg_temp.err(format($$SELECT heartbeat(%s, 1)$$, :v));
SELECT pg_temp.err(format('SELECT cancel(%s)', :v));
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
DELETE FROM pg_temp.vetoed WHERE worker = 'w';
SELECT fail(:v + 1, 1, 'dead');
INSERT INTO pg_temp.vetoed VALUES ('w');
SELECT pg_temp.err(format('SELECT retry(%s)', :v + 1));
SELECT id - :v AS nth, state, attempt FROM claimqueue.jobs WHERE id >= :v ORDER BY id;
DELETE FROM pg_temp.vetoed;
SELECT complete(:v, 1);
DROP TRIGGER veto ON claimqueue.jobs;
-- A BEFORE INSERT row trigger that returns NULL: enqueue() and
-- enqueue_batch() raise 09000 and enqueue nothing (enqueue() said the queue
-- did not exist, QC001, and with a dedup key 40001, to retry forever).
CREATE FUNCTION pg_temp.veto_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.payload ? 'veto' THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER veto_insert BEFORE INSERT ON claimqueue.jobs
    FOR EACH ROW EXECUTE FUNCTION pg_temp.veto_insert();
SELECT pg_temp.fingerprint() AS before \gset
SELECT pg_temp.err($$SELECT enqueue('veto', '{"veto": 1}')$$);
SELECT pg_temp.err($$SELECT enqueue('veto', '{"veto": 1}', dedup_key => 'k')$$);
SELECT pg_temp.err($$SELECT enqueue_batch('veto', ARRAY['{}', '{"veto": 1}']::jsonb[])$$);
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
-- An unknown queue is still QC001; a job the trigger lets through is enqueued.
SELECT pg_temp.err($$SELECT enqueue('no_such_queue', '{"veto": 1}')$$);
SELECT enqueue('veto', '{}', dedup_key => 'k') > :v AS enqueued;
SELECT enqueue('veto', '{}', dedup_key => 'k') = max(id) AS found FROM claimqueue.jobs;
DROP TRIGGER veto_insert ON claimqueue.jobs;
