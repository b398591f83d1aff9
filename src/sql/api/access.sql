-- Queue privileges: grant_queue() and revoke_queue(), the queues a caller may
-- see, the role that called the API function running now. The table
-- claimqueue.queue_grants is in src/sql/tables.sql; the roles and what each
-- may call are in api/roles.sql.

-- Every change tells all sessions to forget the grants they remembered
-- (src/api/access.cpp).
CREATE OR REPLACE FUNCTION claimqueue.queue_grants_changed() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_queue_grants_changed';
REVOKE ALL ON FUNCTION claimqueue.queue_grants_changed() FROM PUBLIC;
CREATE OR REPLACE TRIGGER queue_grants_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON claimqueue.queue_grants
    FOR EACH STATEMENT EXECUTE FUNCTION claimqueue.queue_grants_changed();

-- The queues the caller holds any privilege on (all for an administrator):
-- the views show only these. Callable by everyone: it tells a role only
-- about its own access.
CREATE OR REPLACE FUNCTION claimqueue.visible_queues() RETURNS SETOF integer
    LANGUAGE c STABLE ROWS 10
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'cq_visible_queues';

-- The role that called the claimqueue API function running now (NULL outside
-- one): a trigger on claimqueue.jobs runs as the extension's owner, like the
-- function that fired it, and can ask this who the caller was.
CREATE OR REPLACE FUNCTION claimqueue.api_caller() RETURNS regrole
LANGUAGE c STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_api_caller';
COMMENT ON FUNCTION claimqueue.api_caller()
    IS 'the role that called the claimqueue API function running now; NULL outside one';

CREATE OR REPLACE FUNCTION @extschema@.grant_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_grant_queue';
COMMENT ON FUNCTION @extschema@.grant_queue(text, text, text)
    IS 'let role (or public) produce into, consume from or manage queue; true if the grant is new';

CREATE OR REPLACE FUNCTION @extschema@.revoke_queue(queue text, privilege text, role text)
RETURNS boolean
LANGUAGE c VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'cq_revoke_queue';
COMMENT ON FUNCTION @extschema@.revoke_queue(text, text, text)
    IS 'take back a grant_queue() grant; true if it existed';

CREATE OR REPLACE VIEW @extschema@.queue_privileges AS
SELECT q.name AS queue, g.privilege,
       CASE WHEN g.grantee::pg_catalog.oid = 0 THEN 'PUBLIC' ELSE g.grantee::pg_catalog.text END AS grantee
FROM claimqueue.queue_grants g
JOIN claimqueue.queues q ON q.queue_id = g.queue_id
WHERE q.queue_id IN (SELECT claimqueue.visible_queues());
COMMENT ON VIEW @extschema@.queue_privileges
    IS 'per-queue grants, for the queues the caller holds a privilege on';

REVOKE ALL ON FUNCTION
    @extschema@.grant_queue(text, text, text),
    @extschema@.revoke_queue(text, text, text),
    claimqueue.api_caller()
FROM PUBLIC;
REVOKE ALL ON @extschema@.queue_privileges FROM PUBLIC;
GRANT EXECUTE ON FUNCTION claimqueue.visible_queues() TO PUBLIC;
