-- todo.claim(): claim the next ready todo of a conversation (FOR UPDATE SKIP LOCKED inside),
-- then todo.release() it, so the pool stays the same size run after run
\set t random(1, :tenants)
\set c random(1, 20)
BEGIN;
SELECT todo.set_context('t' || :t, 'c' || :c, 'bench');
SELECT id, fence FROM todo.claim() \gset
SELECT todo.release(:id, :fence);
COMMIT;
