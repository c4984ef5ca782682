"""The Citus tier's multi-session checks, through the coordinator of a distributed store
(test_citus.py prepares it): tenants on both workers, concurrent claims one by one and by
batches (every todo completed exactly once, no claim held twice), a transaction writing two
tenants on two workers, LISTEN on the coordinator, tenant isolation as a plain role, and
todo.distribute()'s refusal.
`run(db)` makes the checks (libpq's environment: the coordinator's)."""
import threading
from collections import Counter

import psycopg

from checks import check
from citus_tenants import on_two_workers

DB = None  # run()'s
done, errors = Counter(), []


def connect(user="agent_login", autocommit=False):
    return psycopg.connect(dbname=DB, user=user, autocommit=autocommit)


def agent(tenant, name, batch):
    """Claims and finishes until nothing is ready: one todo at a time, or `batch` at a time
    (todo.claim_batch, todo.finish_batch) when it is given."""
    claim = "SELECT id, fence FROM todo.claim(lease_seconds => 60)"
    if batch:
        claim = f"SELECT id, fence FROM todo.claim_batch({batch}, 60)"
    try:
        with connect() as c:
            while True:
                with c.transaction():
                    c.execute("SELECT todo.set_context(%s, NULL, %s)", (tenant, name))
                    rows = [r for r in c.execute(claim).fetchall() if r[0] is not None]
                if not rows:
                    return
                with c.transaction():
                    c.execute("SELECT todo.set_context(%s, NULL, %s)", (tenant, name))
                    if batch:
                        c.execute("SELECT todo.finish_batch(%s, %s, outcome => %s)",
                                  ([r[0] for r in rows], [r[1] for r in rows], name))
                    else:
                        c.execute("SELECT todo.finish(%s, %s, outcome => %s)", (rows[0][0], rows[0][1], name))
                for r in rows:
                    done[(tenant, r[0])] += 1
    except Exception as e:  # reported below
        errors.append(f"{tenant}/{name}: {e}")


def run(db):
    global DB, done, errors
    DB = db
    AGENTS, PER_TENANT = 4, 100
    admin = connect("postgres", autocommit=True)
    tenants, ports = on_two_workers(admin, "tenant")
    check("two tenants on two different workers", len(ports) == 2, str(ports))
    for t in tenants:
        admin.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (t,))
    # --- a pool of todos per tenant, claimed concurrently by agents of both tenants
    for t in tenants:
        with connect() as c:
            c.execute("SELECT todo.set_context(%s, NULL, 'planner')", (t,))
            c.execute("SELECT todo.todo_writ(%s)", ("\n".join(f"/todo add task {n}" for n in range(PER_TENANT)),))
    done, errors = Counter(), []
    # half the agents one todo at a time, half by batches of 5
    threads = [threading.Thread(target=agent, args=(t, f"agent-{t}-{k}", 5 if k % 2 else None))
               for t in tenants for k in range(AGENTS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    check("agents of both tenants claim and finish, one by one and by batches, without an error",
          not errors, "; ".join(errors[:3]))
    for t in tenants:
        with connect() as c:
            c.execute("SELECT todo.set_context(%s)", (t,))
            rows = c.execute("SELECT status, count(*) FROM todo.todos GROUP BY status").fetchall()
            finished_by = c.execute("SELECT count(DISTINCT outcome) FROM todo.todos").fetchone()[0]
            problems = c.execute("SELECT count(*) FROM todo.verify()").fetchone()[0]
            claims = c.execute(
                "SELECT count(*) FROM todo.events WHERE new_status = 'in_progress' AND old_status = 'pending'").fetchone()[0]
        mine = [k for k in done if k[0] == t]
        check(f"{t}: every todo completed", rows == [("completed", PER_TENANT)], str(rows))
        check(f"{t}: each completed exactly once", len(mine) == PER_TENANT and all(done[k] == 1 for k in mine))
        check(f"{t}: no claim taken twice (one pending -> in_progress per todo)", claims == PER_TENANT, str(claims))
        check(f"{t}: several agents did the work", finished_by > 1, str(finished_by))
        check(f"{t}: todo.verify() finds nothing", problems == 0, str(problems))
    # --- one transaction writing both tenants, on two workers: both or neither
    a, b = tenants
    with connect() as c:
        with c.transaction():
            c.execute("SELECT todo.set_context(%s, 'x')", (a,))
            c.execute("SELECT todo.todo_writ('/todo add both-or-neither')")
            c.execute("SELECT todo.set_context(%s, 'x')", (b,))
            c.execute("SELECT todo.todo_writ('/todo add both-or-neither')")
        for t in tenants:
            with c.transaction():
                c.execute("SELECT todo.set_context(%s)", (t,))
                n = c.execute("SELECT count(*) FROM todo.todos WHERE subject = 'both-or-neither'").fetchone()[0]
            check(f"two-worker transaction committed on {t}", n == 1, str(n))
        try:
            with c.transaction():
                c.execute("SELECT todo.set_context(%s, 'x')", (a,))
                c.execute("SELECT todo.todo_writ('/todo add rolled-back')")
                c.execute("SELECT todo.set_context(%s, 'x')", (b,))
                c.execute("SELECT todo.todo_writ('/todo add rolled-back')")
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        counts = []
        for t in tenants:
            with c.transaction():
                c.execute("SELECT todo.set_context(%s)", (t,))
                counts.append(c.execute("SELECT count(*) FROM todo.todos WHERE subject = 'rolled-back'").fetchone()[0])
        check("a rolled-back two-worker transaction left nothing on either", counts == [0, 0], str(counts))
    # --- one statement in an implicit transaction (autocommit): the context reaches the worker
    # for reads too (Citus opens a remote transaction block for a read only inside a block)
    with connect(autocommit=True) as c:
        for t in tenants:
            try:
                out = c.execute("SELECT todo.todo_writ('/todo list') FROM todo.set_context(%s, 'x') s", (t,)).fetchone()[0]
                ready = c.execute("SELECT count(*) FROM todo.set_context(%s, 'x') s, LATERAL todo.ready() r", (t,)).fetchone()[0]
                check(f"{t}: a read as one autocommit statement sees its tenant's list",
                      "both-or-neither" in out and "rolled-back" not in out and ready == 1, f"{out!r} {ready}")
            except psycopg.Error as e:
                check(f"{t}: a read as one autocommit statement sees its tenant's list", False, str(e).splitlines()[0])
    # --- the change feed across workers: each tenant's cursor (its worker's snapshot) finds
    # the write on its worker (todo.changed_tenants, what pg_todos serve asks each tick), and
    # with todo.notify = hint a LISTEN on the coordinator hears a hint of each tenant (its
    # channel from todo.channel()), with an empty payload, after commit
    listener = connect(autocommit=True)
    channels, cursors = {}, {}
    for t in tenants:
        ch = listener.execute("SELECT todo.channel() FROM todo.set_context(%s) s", (t,)).fetchone()[0]
        cursors[t] = listener.execute("SELECT todo.changes_since(NULL)->>'cursor' FROM todo.set_context(%s) s",
                                      (t,)).fetchone()[0]
        channels[ch] = t
        listener.execute(f'LISTEN "{ch}"')
    quiet = listener.execute("SELECT todo.changed_tenants(%s, %s)",
                             (tenants, [cursors[t] for t in tenants])).fetchone()[0]
    with connect(user="postgres") as c:
        c.execute("SET todo.notify = 'hint'")
        for t in tenants:
            with c.transaction():
                c.execute("SELECT todo.set_context(%s, 'listen', 'agent')", (t,))
                c.execute("SELECT todo.todo_writ('/todo add heard')")
    changed = listener.execute("SELECT todo.changed_tenants(%s, %s)",
                               (tenants, [cursors[t] for t in tenants])).fetchone()[0]
    check("the feed's cursors across workers: nothing changed, then both tenants' writes found",
          quiet == [] and sorted(changed) == sorted(tenants), f"{quiet} {changed}")
    heard = set()
    gen = listener.notifies(timeout=5)
    for n in gen:
        heard.add(channels.get(n.channel))
        if n.payload != "":
            heard.add("a payload " + n.payload)
        if heard >= set(tenants):
            gen.close()
    check("with todo.notify = hint, LISTEN on the coordinator hears both workers' tenants, payloads empty",
          heard == set(tenants), str(heard))
    listener.close()
    # --- plain SQL through the triggers, as the plain role with SET LOCAL: tenant isolation
    with connect() as c:
        with c.transaction():
            c.execute(f"SET LOCAL todo.tenant = '{a}'")
            c.execute("SET LOCAL todo.agent = 'plain-sql'")
            c.execute("INSERT INTO todo.todos (subject, conversation_id) VALUES ('plain', 'sql')")
            seen = {r[0] for r in c.execute("SELECT DISTINCT tenant_id FROM todo.todos")}
            ev = c.execute("SELECT e.agent_id FROM todo.events e JOIN todo.todos t ON t.tenant_id = e.tenant_id AND t.id = e.todo_id"
                           " WHERE t.subject = 'plain' AND e.action = 'insert'").fetchone()
            other = c.execute("SELECT count(*) FROM todo.todos WHERE tenant_id = %s", (b,)).fetchone()[0]
            upd = c.execute("UPDATE todo.todos SET subject = 'pwned' WHERE tenant_id = %s", (b,)).rowcount
        check("plain SQL as the plain role sees only its tenant", seen == {a}, str(seen))
        check("the row trigger logged the plain INSERT with the agent in context", ev == ("plain-sql",), str(ev))
        check("another tenant's rows are invisible and unchangeable", other == 0 and upd == 0, f"{other} {upd}")
        try:
            with c.transaction():
                c.execute(f"SET LOCAL todo.tenant = '{a}'")
                c.execute("INSERT INTO todo.todos (tenant_id, subject) VALUES (%s, 'planted')", (b,))
            check("writing another tenant's row is refused", False, "it was accepted")
        except psycopg.errors.InsufficientPrivilege:
            check("writing another tenant's row is refused (42501)", True)
        try:
            with c.transaction():
                c.execute("SELECT count(*) FROM todo.todos")
            check("no tenant in context: an error", False, "it answered")
        except psycopg.errors.InvalidParameterValue:
            check("no tenant in context: an error (22023), never all tenants", True)
        # a claim cannot be written by plain SQL, on a worker too
        try:
            with c.transaction():
                c.execute(f"SET LOCAL todo.tenant = '{a}'")
                c.execute("UPDATE todo.todos SET status = 'in_progress', claimed_by = 'me', lease_expires_at = now() + interval '1 h'"
                          " WHERE subject = 'plain'")
            check("a claim written by plain SQL is refused", False, "it was accepted")
        except psycopg.errors.ObjectNotInPrerequisiteState:
            check("a claim written by plain SQL is refused on the worker (55000)", True)
    # --- todo.distribute() refuses a role that does not own the tables
    try:
        with connect() as c:
            c.execute("SELECT todo.distribute()")
        check("distribute() refuses the plain role", False, "it ran")
    except psycopg.errors.InsufficientPrivilege:
        check("distribute() refuses the plain role (42501)", True)
