\i test/regress/setup.sql
-- claimqueue.api_caller(): the role that called the queue API function running
-- now. A trigger on claimqueue.jobs runs as the extension's owner (like the
-- function that fired it) and can ask who the caller was. It stays right
-- across a queue API call made inside another (here: the trigger enqueues a
-- follow-up job), and after such a call fails.
SELECT pg_temp.err($$SELECT claimqueue.api_caller()$$);
SELECT claimqueue.api_caller() IS NULL AS null_outside_the_api;
CREATE TABLE pg_temp.seen (step text, caller regrole, current_role_name name);
-- (It runs with the API function's search_path, pg_catalog and pg_temp: names
-- are qualified.)
CREATE FUNCTION pg_temp.note_caller() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.seen VALUES ('before nested', claimqueue.api_caller(), current_user);
    IF NEW.payload ? 'follow_up' THEN
        PERFORM public.enqueue('follow', '{"nested": true}');
        INSERT INTO pg_temp.seen VALUES ('after nested', claimqueue.api_caller(), current_user);
        BEGIN
            PERFORM public.enqueue('no_such_queue', '{}');
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO pg_temp.seen VALUES ('after failed nested (' || SQLSTATE || ')',
                                             claimqueue.api_caller(), current_user);
        END;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER note_caller AFTER INSERT ON claimqueue.jobs
    FOR EACH ROW WHEN (NOT NEW.payload ? 'nested') EXECUTE FUNCTION pg_temp.note_caller();
SELECT create_queue('work');
SELECT create_queue('follow');
CREATE ROLE caller_app IN ROLE claimqueue_producer;
SELECT grant_queue('work', 'produce', 'caller_app');
SELECT grant_queue('follow', 'produce', 'caller_app');
SET ROLE caller_app;
SELECT enqueue('work', '{"follow_up": true}') > 0 AS enqueued;
RESET ROLE;
SELECT step, caller, current_role_name = (SELECT extowner::regrole::name FROM pg_extension
                                          WHERE extname = 'claimqueue') AS runs_as_owner
FROM pg_temp.seen;
SELECT claimqueue.api_caller() IS NULL AS null_again_after_the_call;
-- An error inside an API call leaves no caller behind either.
SELECT pg_temp.err($$SELECT enqueue('no_such_queue', '{}')$$);
SELECT claimqueue.api_caller() IS NULL AS null_after_an_error;
DROP TRIGGER note_caller ON claimqueue.jobs;
SELECT revoke_queue('work', 'produce', 'caller_app');
SELECT revoke_queue('follow', 'produce', 'caller_app');
DROP ROLE caller_app;
