-- 0.4.0 -> 0.5.0: what changes in the tables (src/sql/README.md, "Changing
-- the schema"). Functions, views and grants come from api/ after this part.

-- Claims that die with their session (release_on_disconnect): the owner
-- token of such a claim, and the index the reaper finds them by.
ALTER TABLE claimqueue.jobs ADD COLUMN owner_session bigint;
CREATE INDEX jobs_owned_idx ON claimqueue.jobs (owner_session)
    WHERE state = 'running' AND owner_session IS NOT NULL;

-- dequeue, complete_and_dequeue and dequeue_wait take release_on_disconnect
-- as a new last argument: a new signature, defined again by api/. IF EXISTS:
-- an upgrade from an older release runs this part before api/ has made the
-- 0.4.0 ones.
DROP FUNCTION IF EXISTS @extschema@.dequeue(text, text, integer, interval);
DROP FUNCTION IF EXISTS @extschema@.complete_and_dequeue(bigint, integer, text, text, integer, interval, jsonb);
DROP PROCEDURE IF EXISTS @extschema@.dequeue_wait(text, text, integer, interval, interval, jsonb);
