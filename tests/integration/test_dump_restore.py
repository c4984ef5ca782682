"""dump_restore: user data survives pg_dump / pg_restore. Seeds a database, dumps it in custom
format, restores into a fresh database, and checks that every tenant, counter, todo, event,
dependency, token, checklist item, comment, tracker numbering and waiting claim came back unchanged and that the restored store keeps working (next id,
triggers, the claim and the dependency, row-level security on every table)."""
import os
import re
import subprocess
import tempfile

import pg
from checks import check

SEED = r"""
CREATE EXTENSION pg_todos;
INSERT INTO todo.tenants (tenant_id, name) VALUES ('acme', 'Acme'), ('globex', 'Globex');
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'planner', 'turn-1');
INSERT INTO todo.todos (subject, description) VALUES ('one', E'multi\nline'), ('two', NULL), ('three', NULL);
INSERT INTO todo.todos (conversation_id, subject, priority) VALUES (NULL, 'tenant-wide', 'high');
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1;
UPDATE todo.todos SET status = 'completed', outcome = 'done' WHERE id = 1;
UPDATE todo.todos SET status = 'cancelled' WHERE id = 2;
DELETE FROM todo.todos WHERE id = 3;
-- a subtask stored before its parent (the parent's update moves it to the end of the heap),
-- a dependency and a live claim
INSERT INTO todo.todos (subject) VALUES ('parent');
INSERT INTO todo.todos (subject, parent_id) VALUES ('child', 5);
UPDATE todo.todos SET description = 'moved' WHERE id = 5;
SELECT todo.block(6, 4);
SELECT id, fence FROM todo.claim(4);
-- a checkable list and a comment (Backlog.md's)
INSERT INTO todo.checklist_items (todo_id, kind, position, text, checked) VALUES (5, 'acceptance', 1, 'it works', true), (5, 'done', 1, 'tested', false);
INSERT INTO todo.comments (todo_id, position, author, body) VALUES (5, 1, '@ada', 'on it');
SELECT todo.set_context('globex', NULL, 'bot');
INSERT INTO todo.todos (subject) VALUES ('globex one');
-- a tracker's numbering (Task Master's next task id; globex's, so acme's ids stay as they are)
SELECT todo.call('taskmaster/add_task', '{"projectRoot": "/app", "title": "numbered", "description": "by the store"}') IS NOT NULL;
-- a waiting claim (MCP's task), ended at once: no todo 999
SELECT todo.claim_wait('{"id": 999, "wait_seconds": 600}') IS NOT NULL;
COMMIT;
-- a bearer token of the HTTP service, and a revoked one
SELECT count(*) FROM todo.create_token('acme', 'Ada');
SELECT todo.revoke_token(token_id) FROM todo.create_token('acme', 'old');
"""

SNAPSHOT = """
SELECT 'tenants', md5(string_agg(t::text, '|' ORDER BY tenant_id)) FROM todo.tenants t;
SELECT 'counters', md5(string_agg(c::text, '|' ORDER BY tenant_id)) FROM todo.counters c;
SELECT 'todos', count(*), md5(string_agg(t::text, '|' ORDER BY tenant_id, id)) FROM todo.todos t;
SELECT 'events', count(*), md5(string_agg(e::text, '|' ORDER BY tenant_id, todo_id, version)) FROM todo.events e;
SELECT 'dependencies', count(*), md5(string_agg(d::text, '|' ORDER BY tenant_id, todo_id, depends_on)) FROM todo.dependencies d;
SELECT 'tokens', count(*), md5(string_agg(k::text, '|' ORDER BY token_id)) FROM todo.tokens k;
SELECT 'checklist_items', count(*), md5(string_agg(c::text, '|' ORDER BY tenant_id, todo_id, kind, position)) FROM todo.checklist_items c;
SELECT 'comments', count(*), md5(string_agg(c::text, '|' ORDER BY tenant_id, todo_id, position)) FROM todo.comments c;
SELECT 'caller_numbers', count(*), md5(string_agg(c::text, '|' ORDER BY tenant_id, conversation_id, prefix)) FROM todo.caller_numbers c;
SELECT 'claim_waits', count(*), md5(string_agg(w::text, '|' ORDER BY tenant_id, wait_id)) FROM todo.claim_waits w;
"""

# ids continue after the highest ever given (7), triggers fire, the claim and the dependency
# hold, RLS policies are back
AFTER = r"""
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'worker') \gset
INSERT INTO todo.todos (subject) VALUES ('after restore') RETURNING id;
UPDATE todo.todos SET status = 'in_progress' WHERE id = 5 RETURNING status, started_at IS NOT NULL;
SELECT count(*) FROM todo.events WHERE todo_id = 7;
SELECT todo.todo_writ('/todo claim 4');
SELECT todo.todo_writ('/todo list');
COMMIT;
SELECT relname || ':' || relforcerowsecurity FROM pg_class WHERE relnamespace = 'todo'::regnamespace AND relkind = 'r' ORDER BY 1;
"""

EXPECTED_AFTER = """7
in_progress|t
1
[/todo claim 4]
ERR: #4 is claimed by planner until TIME — /todo ready lists the todos you can claim
[END TODO]
[/todo list]
4 open (2 in progress, 2 pending):
▶ #4 [in_progress] tenant-wide (claimed by planner) (tenant-wide)
▶ #5 [in_progress] parent (0/1 done)
#6 [pending] child (blocked by #4)
#7 [pending] after restore
[END TODO]
caller_numbers:true
channel_key:false
checklist_items:true
claim_waits:true
comments:true
counters:true
dependencies:true
distribution:true
events:true
id_ranges:true
locks:true
roles:true
tenants:true
todos:true
tokens:true
"""


def test_a_dump_restores_every_row_and_a_working_store(cluster):
    cluster.database("dump_src", extension=False)
    cluster.database("dump_dst", extension=False)
    cluster.psql(SEED, db="dump_src")
    env = {**os.environ, **cluster.env()}
    with tempfile.TemporaryDirectory() as work:
        dump = os.path.join(work, "src.dump")
        subprocess.run([f"{pg.BINDIR}/pg_dump", "-Fc", "-d", "dump_src", "-f", dump], env=env, check=True)
        restore = subprocess.run([f"{pg.BINDIR}/pg_restore", "-d", "dump_dst", "--exit-on-error", dump],
                                 env=env, capture_output=True, text=True)
    check("pg_restore succeeds", restore.returncode == 0, restore.stderr)
    src, dst = cluster.psql(SNAPSHOT, db="dump_src"), cluster.psql(SNAPSHOT, db="dump_dst")
    check("restored tenants, counters, todos, events, dependencies, tokens, checklist items and comments are identical",
          src == dst, f"\n{src}\n!=\n{dst}")
    check("the seed really had checklist items and a comment",
          "\nchecklist_items|2|" in "\n" + dst and "\ncomments|1|" in "\n" + dst, dst)
    check("the seed really had rows", "\ntodos|7|" in "\n" + dst, dst)
    check("the seed really had a tracker's numbering", "\ncaller_numbers|1|" in "\n" + dst, dst)
    check("the seed really had a waiting claim", "\nclaim_waits|1|" in "\n" + dst, dst)
    check("the seed really had a dependency", "\ndependencies|1|" in "\n" + dst, dst)
    after = re.sub(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z", "TIME", cluster.psql(AFTER, db="dump_dst"))
    check("the restored store keeps working", after == EXPECTED_AFTER, f"got:\n{after}")
    # the channel key is not dumped: the restored database made its own
    keys = [cluster.psql("SELECT encode(key, 'hex') FROM todo.channel_key", db=d).split() for d in ("dump_src", "dump_dst")]
    check("the restored database has a channel key of its own, not the dumped one",
          len(keys[0]) == 1 and len(keys[1]) == 1 and keys[0] != keys[1], keys)
