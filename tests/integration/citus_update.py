"""The Citus tier's update check: a store distributed at the previous version (with that
version's todo.distribute()) holds the todos of two tenants on two workers; ALTER EXTENSION
pg_todos UPDATE on the coordinator reaches every node, todo.distribute() (the post-update step)
distributes whatever the update added and leaves the rest as it was, and every todo, claim,
dependency and event is still there and still works. test_citus.py creates the database at the
previous version and calls `run(db, from_, to)` (libpq's environment: the coordinator's), then
citus_store's checks on the updated store.
"""
import psycopg

from checks import check
from citus_tenants import on_two_workers

DB = FROM = TO = admin = None  # run()'s


def versions():
    """pg_todos' version on the coordinator and on each worker."""
    here = admin.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'").fetchone()[0]
    there = [r[0] for r in admin.execute(
        "SELECT result FROM run_command_on_workers($$SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'$$)")]
    return [here] + there


def agent(tenant, conversation="plan", name="planner"):
    """A transaction of the plain role with its context set, on a new connection."""
    c = psycopg.connect(dbname=DB, user="agent_login")
    c.execute("SELECT todo.set_context(%s, %s, %s)", (tenant, conversation, name))
    return c


def writ(c, text):
    return c.execute("SELECT todo.todo_writ(%s)", (text,)).fetchone()[0]


def snapshot(t):
    with agent(t) as c:
        return {
            "list": writ(c, "/todo list"),
            "rows": c.execute("SELECT id, parent_id, subject, status, claimed_by, fence, lease_expires_at"
                              " FROM todo.todos ORDER BY id").fetchall(),
            "edges": c.execute("SELECT todo_id, depends_on FROM todo.dependencies ORDER BY 1, 2").fetchall(),
            "events": c.execute("SELECT count(*) FROM todo.events").fetchone()[0],
        }


def run(db, from_, to):
    global DB, FROM, TO, admin
    DB, FROM, TO = db, from_, to
    admin = psycopg.connect(dbname=DB, user="postgres", autocommit=True)
    check(f"every node starts at {FROM}", versions() == [FROM] * 3, str(versions()))
    # --- distributed at FROM, with its own todo.distribute()
    admin.execute("SELECT todo.grant_usage('agent_login')")
    admin.execute("SELECT todo.distribute()")
    tenants, ports = on_two_workers(admin, "kept")
    check("two tenants on two different workers", len(ports) == 2, str(ports))
    for t in tenants:
        admin.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s)", (t,))
    # --- the previous version's store in use: todos, a subtask, a dependency, a claim, a finish
    for t in tenants:
        with agent(t) as c:
            writ(c, "/todo add build the artifacts\n/todo add publish the release\n/todo add write the notes")
            writ(c, "/todo subtask 1: sign the artifacts\n/todo block 2 on 1\n/todo done 3")
        with agent(t, name="builder") as c:
            row = c.execute("SELECT id, fence FROM todo.claim(todo_id => 1, lease_seconds => 3600)").fetchone()
        check(f"{t}: a claim at {FROM}", row == (1, 1), str(row))
    before = {t: snapshot(t) for t in tenants}
    # --- the update, on the coordinator only
    admin.execute("ALTER EXTENSION pg_todos UPDATE")
    check(f"ALTER EXTENSION UPDATE reaches every node: all at {TO}", versions() == [TO] * 3, str(versions()))
    after = {t: snapshot(t) for t in tenants}
    for t in tenants:
        check(f"{t}: todos, claims, dependencies and events unchanged by the update", after[t] == before[t],
              f"{before[t]} != {after[t]}")
        check(f"{t}: the list shows what was written at {FROM}", "#1 [in_progress] build the artifacts" in after[t]["list"],
              after[t]["list"])
    # --- the post-update step: todo.distribute() takes what the update added, keeps the rest
    rows = admin.execute("SELECT relation::text, distribution FROM todo.distribute()").fetchall()
    kinds = dict(rows)
    check("distribute() after the update: every table distributed as on a fresh install",
          kinds == {"todo.tenants": "reference", "todo.tokens": "reference", "todo.distribution": "reference",
                    **{f"todo.{x}": "distributed by tenant_id" for x in ("todos", "counters", "id_ranges", "events", "dependencies",
                                                                         "checklist_items", "comments", "locks",
                                                                         "caller_numbers", "claim_waits")}},
          str(rows))
    keys = admin.execute("SELECT conname FROM pg_constraint WHERE conname IN ('checklist_items_todo_fkey', 'comments_todo_fkey')"
                         " ORDER BY 1").fetchall()
    check("distribute() after the update gives the tables the update added their keys to todo.todos",
          keys == [("checklist_items_todo_fkey",), ("comments_todo_fkey",)], str(keys))
    key = admin.execute("SELECT count(*) FROM pg_constraint WHERE conname = 'caller_numbers_tenant_id_fkey'").fetchone()[0]
    check("distribute() after the update gives todo.caller_numbers (1.1.0) its key to todo.tenants", key == 1, key)
    key = admin.execute("SELECT count(*) FROM pg_constraint WHERE conname = 'claim_waits_tenant_id_fkey'").fetchone()[0]
    check("distribute() after the update gives todo.claim_waits (1.2.0) its key to todo.tenants", key == 1, key)
    rec = admin.execute("SELECT pg_todos_version FROM todo.distribution").fetchall()
    check(f"the record still says when it was distributed: at {FROM}", rec == [(FROM,)], str(rec))
    shards = admin.execute(
        "SELECT count(DISTINCT n.nodeport) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)"
        " JOIN pg_dist_node n USING (groupid) WHERE s.logicalrelid = 'todo.todos'::regclass AND n.groupid <> 0").fetchone()[0]
    check("todo.todos still has shards on both workers", shards == 2, str(shards))
    # --- and the updated store works: the claim made before, the dependency, new ids, verify()
    for t in tenants:
        with agent(t, name="builder") as c:
            refused = None
            try:
                with c.transaction():
                    c.execute("SELECT todo.block(1, 2)")
            except psycopg.Error as e:
                refused = e.sqlstate
            check(f"{t}: a cycle through the dependency made at {FROM} is refused (22023)", refused == "22023", str(refused))
            out = writ(c, "/todo done 1")
            check(f"{t}: the claim taken at {FROM} is finished at {TO}", "\nOK: completed #1 — build the artifacts\n" in out, out)
            ready = [r[0] for r in c.execute("SELECT id FROM todo.ready()")]
            check(f"{t}: the dependency made at {FROM} released #2", 2 in ready, str(ready))
            out = writ(c, "/todo add after the update")
            check(f"{t}: new ids follow the old ones", "\nOK: added #5 — after the update\n" in out, out)
            # in a transaction of its own: todo.verify() reads with plain SQL, which Citus refuses on
            # placements a pg_todos call (run as the extension's owner) changed in this transaction
            c.commit()
            c.execute("SELECT todo.set_context(%s, 'plan', 'builder')", (t,))
            problems = c.execute("SELECT * FROM todo.verify()").fetchall()
            check(f"{t}: todo.verify() finds nothing", problems == [], str(problems))
