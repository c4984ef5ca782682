-- pg_todos 1.1.1 -> 1.2.0: the core at the speed of hand-written SQL (issue 54).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.2.0'" to load this file. \quit

-- The open todos of each list in position order: every read of open todos (the open block, the
-- preamble, the writ's list, the dialects' reads) probes it once for the list and once for the
-- pool, where it probed todos_conversation_list once per open status for each (ten probes).
-- Built here in one pass over todo.todos (writes to it wait meanwhile: on 1 M rows, about
-- two seconds on the machine of bench/results.md).
CREATE INDEX todos_open ON todo.todos (tenant_id, conversation_id, position, id)
    WHERE status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review');
COMMENT ON INDEX todo.todos_open IS 'The open todos (pending, in progress, blocked, deferred, review) of each list in position order: what the reads of open todos scan.';
