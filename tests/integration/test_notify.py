"""notify: every committed call of a pg_todos function that writes sends one notification on
the tenant's channel (todo.channel()), carrying ids only; a write by plain SQL sends one per
row (the row trigger), once committed; a rolled-back write sends nothing, nor does a failed
command; a listener on another tenant's channel hears nothing. A listener session LISTENs on
two tenants' channels while a writer session runs the script below through psql."""
from checks import check

WRITES = r"""
-- committed: the writ (two commands, one notification with both ids)
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ(E'/todo add one\n/todo add two');
COMMIT;
-- rolled back: nothing
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ('/todo add never committed');
SELECT todo.call('todowrite', '{"todos": []}');
ROLLBACK;
-- committed: a whole-list replace (one notification with every id it touched)
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.call('todowrite', '{"todos": [{"content": "one", "status": "completed", "priority": "high"}, {"content": "three", "status": "pending", "priority": "low"}]}');
COMMIT;
-- committed: a REST insert of a tenant-wide todo
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "pool", "conversation_id": null}');
COMMIT;
-- plain SQL: the row trigger notifies for each row changed, after commit only
BEGIN;
SELECT todo.set_context('globex', 'conv-9', 'agent');
INSERT INTO todo.todos (subject) VALUES ('by SQL one'), ('by SQL two');
COMMIT;
BEGIN;
SELECT todo.set_context('globex', 'conv-9', 'agent');
INSERT INTO todo.todos (subject) VALUES ('rolled back');
ROLLBACK;
BEGIN;
SELECT todo.set_context('globex');
UPDATE todo.todos SET status = 'completed' WHERE subject = 'by SQL two';
COMMIT;
-- a failed command writes nothing and notifies nothing
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ('/todo done 999');
COMMIT;
"""

EXPECTED = [
    ("acme", '{"conversation_id":"conv-1","ids":[1,2]}'),
    ("acme", '{"conversation_id":"conv-1","ids":[1,3,2]}'),
    ("acme", '{"conversation_id":null,"ids":[4]}'),
    ("globex", '{"conversation_id":"conv-9","ids":[1]}'),
    ("globex", '{"conversation_id":"conv-9","ids":[2]}'),
    ("globex", '{"conversation_id":"conv-9","ids":[2]}'),
]


def test_notifications_after_commit_only_on_the_writers_tenant(cluster):
    db = cluster.database("notify", tenants=["acme", "globex"])
    channels = {}
    with cluster.connect(db) as c:
        for tenant in ("acme", "globex"):
            with c.transaction():
                c.execute("SELECT set_config('todo.tenant', %s, true)", (tenant,))
                channels[c.execute("SELECT todo.channel()").fetchone()[0]] = tenant
    listener = cluster.connect(db)
    for channel in channels:
        listener.execute(f'LISTEN "{channel}"')
    cluster.psql(WRITES, db=db)
    got = []
    for n in listener.notifies(timeout=5, stop_after=len(EXPECTED) + 1):
        got.append((channels.get(n.channel, n.channel), n.payload))
    listener.close()
    check("notifications after commit (per call, or per row of plain SQL), none after rollback, "
          "none on another tenant's channel", got == EXPECTED, got)
