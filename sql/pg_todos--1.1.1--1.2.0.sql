-- pg_todos 1.1.1 -> 1.2.0: the core at the speed of hand-written SQL (issue 54).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.2.0'" to load this file. \quit

-- The open todos of each list in position order: every read of open todos (the open block, the
-- preamble, the writ's list, the dialects' reads) probes it once for the list and once for the
-- pool, where it probed todos_conversation_list once per open status for each (ten probes).
-- Built here in one pass over todo.todos (writes to it wait meanwhile: on 1 M rows, about
-- two seconds on the machine of bench/results.md).
-- Through EXECUTE, IF NOT EXISTS: on a store distributed with Citus, Citus sends a CREATE INDEX
-- to the workers as its statement's text, which in an extension script is the whole script
-- (refused: "cannot insert multiple commands into a prepared statement"); and a worker that
-- has run this script already has the index.
DO $index$
BEGIN
    EXECUTE $sql$CREATE INDEX IF NOT EXISTS todos_open ON todo.todos (tenant_id, conversation_id, position, id)
        WHERE status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review')$sql$;
    EXECUTE $sql$COMMENT ON INDEX todo.todos_open IS 'The open todos (pending, in progress, blocked, deferred, review) of each list in position order: what the reads of open todos scan.'$sql$;
END
$index$;

-- Batch claims: up to quantity ready todos claimed in one statement, and several finished at
-- once, all or nothing
CREATE FUNCTION todo."claim_batch"(
	"quantity" INT,
	"lease_seconds" INT DEFAULT NULL
) RETURNS TABLE (
	"id" bigint,
	"subject" TEXT,
	"fence" bigint,
	"lease_expires_at" timestamp with time zone
)
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'claim_batch_wrapper';
CREATE FUNCTION todo."finish_batch"(
	"todo_ids" bigint[],
	"fences" bigint[] DEFAULT NULL,
	"status" TEXT DEFAULT 'completed',
	"outcome" TEXT DEFAULT NULL
) RETURNS bigint
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'finish_batch_wrapper';
REVOKE EXECUTE ON FUNCTION todo.claim_batch(integer, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION todo.finish_batch(bigint[], bigint[], text, text) FROM PUBLIC;
COMMENT ON FUNCTION todo.claim_batch(integer, integer) IS
    'Claims up to quantity ready todos at once for the agent in context, in claim order, each with the same lease: (id, subject, fence, lease_expires_at) for each; fewer rows when fewer are ready. Concurrent batches never share a todo. Errors: 22004 a NULL quantity; 22023 no tenant or no agent in context, a lease out of range, or a quantity below 1 or over todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.finish_batch(bigint[], bigint[], text, text) IS
    'Completes or cancels several todos at once, each as todo.finish would (fences[k]: the claim todo_ids[k] must be under; NULL: none); all or nothing: the first refusal is the error and none is finished. Returns how many it finished. Errors: 22004 a NULL todo_ids, id or status; 22023 no tenant in context, a status other than completed or canceled, a todo named twice, more fences than todos, or more todos than todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 a todo not in scope; 55006 another agent holds one; 55000 a stale claim, or one finished already (each message names its todo).';

-- the new functions, to every role todo.grant_usage granted
DO $grant$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM todo.roles LOOP
        PERFORM todo.grant_usage(r.role, r.tenant_id, r.plain_sql);
    END LOOP;
END
$grant$;
