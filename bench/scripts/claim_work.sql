-- an agent's unit of work: add a todo, claim the next ready one (its own, or another agent's
-- committed earlier) and finish it, in one transaction; the pool stays the same size
\set t random(1, :tenants)
BEGIN;
SELECT todo.set_context('t' || :t, 'work', 'bench');
SELECT todo.todo_writ('/todo add benchmark job');
SELECT id, fence FROM todo.claim(lease_seconds => 60) \gset
SELECT todo.finish(:id, :fence);
COMMIT;
