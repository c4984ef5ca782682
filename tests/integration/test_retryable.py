#!/usr/bin/env python3
"""retryable: an error that is not the caller's data reaches the caller as an SQL error, on
every surface, and the call commits nothing. Surfaces: the writ (todo.todo_writ), REST
(todo.rest), the tools (todo.call) and the claim functions (todo.claim, todo.finish).

For each surface ("variant" below: one or two calls that write two todos, the contested
target and one other), as the plain role agent_login:
  statement_timeout  another session holds the target's row lock; the caller, with
                     SET LOCAL statement_timeout = '300ms', calls the surface: SQLSTATE 57014,
                     and afterwards nothing of the call is in the table
  cancel             the same with no timeout; a third session pg_cancel_backend()s the caller
                     once it is waiting: 57014, nothing committed
  lock_timeout       the same with SET LOCAL lock_timeout = '200ms': 55P03, nothing committed
  deadlock           two callers each lock one row, then call the surface on the other's row:
                     exactly one gets 40P01 (an SQL error, not an answer) and commits nothing;
                     the other's call succeeds after
  serialization      two SERIALIZABLE callers read the list through the surface, then each
                     writes rows the other read (write skew); the second writer gets 40001 and
                     commits nothing
and a claim conflict (another agent's live claim) is still an ANSWER on the writ (an `ERR:`
line), the tools (`{"error": {"code": "claimed"}}`) and REST (409), and an SQL error from the
SQL functions and a plain UPDATE, with SQLSTATE 55006 (
object_in_use; 0.3.0 raised 55P03, the lock_not_available of a real lock timeout).

A caller here behaves like an application: when a surface answers (no SQL error), it
commits; when it raises, it rolls back. No assertion is about speed: the only sleeps are the
polls of a bounded wait (WAIT_S) for another session to be blocked on a lock.
One kind: bin/test-integration test_retryable.py -k deadlock
"""
import json
import threading
import time

import psycopg
import pytest
from psycopg.types.json import Jsonb

from checks import check

DB = "retryable"
TENANT, CONV = "acme", "conv"
CLAIM_SQLSTATE = "55006"  # object_in_use: never 55P03, a real lock timeout
WAIT_S = 60  # bound on every wait for another session


def connect(user="agent_login"):
    return psycopg.connect(dbname=DB, user=user, autocommit=True)


admin = None  # the superuser's connection (the module's fixture opens it)


@pytest.fixture(scope="module", autouse=True)
def retryable_database(cluster):
    global admin
    cluster.database(DB)
    admin = connect("postgres")
    yield
    admin.execute("DELETE FROM todo.tenants")
    admin.close()


def reset():
    """Tenant acme, four pending todos 'one'…'four' (#1…#4) in conversation conv."""
    admin.execute("DELETE FROM todo.tenants")
    admin.execute("INSERT INTO todo.tenants VALUES (%s)", (TENANT,))
    with admin.transaction():
        admin.execute("SELECT todo.set_context(%s, %s, 'planner')", (TENANT, CONV))
        admin.execute("SELECT todo.todo_writ(%s)", ("/todo add one\n/todo add two\n/todo add three\n/todo add four",))


def state():
    """Everything a call could have changed: the todos and the size of the event log."""
    rows = admin.execute(
        "SELECT id, subject, status, claimed_by, fence FROM todo.todos WHERE tenant_id = %s ORDER BY id",
        (TENANT,)).fetchall()
    events = admin.execute("SELECT count(*) FROM todo.events WHERE tenant_id = %s", (TENANT,)).fetchone()[0]
    return {"todos": rows, "events": events}


def begin(conn, agent, isolation=None):
    conn.execute("BEGIN" + (f" ISOLATION LEVEL {isolation}" if isolation else ""))
    conn.execute("SELECT todo.set_context(%s, %s, %s)", (TENANT, CONV, agent))


def one(conn, sql, args=()):
    return conn.execute(sql, args).fetchone()[0]


# ---- the surfaces: each call returns the surface's answer (or raises) ----

def writ(conn, message):
    return one(conn, "SELECT todo.todo_writ(%s)", (message,))


def rest(conn, method, path, body=None):
    return one(conn, "SELECT todo.rest(%s, %s, %s)", (method, path, None if body is None else Jsonb(body)))


def tool(conn, name, args):
    return one(conn, "SELECT todo.call(%s, %s)", (name, Jsonb(args)))


def the_list(other, target, other_status="in_progress"):
    """Seed 003's whole list of #1…#4 with `other` moved to other_status and `target` completed."""
    items = []
    for i, word in enumerate(["one", "two", "three", "four"], start=1):
        status = "completed" if i == target else other_status if i == other else "pending"
        items.append({"content": word, "status": status, "activeForm": f"Doing {word}"})
    return {"todos": items}


# A variant writes `other` (an open todo nobody locks) and `target` (the contested todo), in
# one call where the surface can, else in two calls of the same transaction. Each returns
# the answers it got.
VARIANTS = {
    "writ (other write first)": lambda c, o, t: [writ(c, f"/todo start {o}\n/todo done {t}")],
    "writ (other write after)": lambda c, o, t: [writ(c, f"/todo done {t}\n/todo start {o}")],
    "REST PATCH /v1/todos/<id> (after a PATCH of another todo)": lambda c, o, t: [
        rest(c, "PATCH", f"/v1/todos/{o}", {"status": "in_progress"}),
        rest(c, "PATCH", f"/v1/todos/{t}", {"status": "completed"})],
    "REST PATCH /v1/todos (bulk, two items)": lambda c, o, t: [
        rest(c, "PATCH", "/v1/todos", [{"id": o, "status": "in_progress"}, {"id": t, "status": "completed"}])],
    "todo.call todolist__set (whole list)": lambda c, o, t: [tool(c, "todolist__set", the_list(o, t))],
    "todo.call CompleteTask (after CompleteTask of another todo)": lambda c, o, t: [
        tool(c, "CompleteTask", {"taskId": str(o)}), tool(c, "CompleteTask", {"taskId": str(t)})],
    "todo.claim (after a claim of another todo)": lambda c, o, t: [
        one(c, "SELECT fence FROM todo.claim(%s)", (o,)), one(c, "SELECT fence FROM todo.claim(%s)", (t,))],
    "todo.finish (after finishing another todo)": lambda c, o, t: [
        one(c, "SELECT todo.finish(%s)", (o,)), one(c, "SELECT todo.finish(%s)", (t,))],
}
# the brief's own writ messages: an add (which takes a new id) around the contested command
ADD_VARIANTS = {
    "writ (/todo add three, then /todo start <locked>)": lambda c, o, t: [writ(c, f"/todo add three\n/todo start {t}")],
    "writ (/todo start <locked>, then /todo add three)": lambda c, o, t: [writ(c, f"/todo start {t}\n/todo add three")],
}
# how each variant reads the list first, for the write-skew test
READS = {
    "writ": lambda c: writ(c, "/todo list"),
    "REST": lambda c: rest(c, "GET", f"/v1/todos?conversation_id={CONV}"),
    "todo.call todolist": lambda c: tool(c, "todolist__get", {}),
    "todo.call CompleteTask": lambda c: tool(c, "ListTasks", {}),
    "todo.claim": lambda c: c.execute("SELECT * FROM todo.ready()").fetchall(),
    "todo.finish": lambda c: c.execute("SELECT * FROM todo.ready()").fetchall(),
}


def reader_of(variant):
    return next(f for k, f in READS.items() if variant.startswith(k))


class Outcome:
    """What one caller's transaction got: the answers, or the SQL error that ended it."""

    def __init__(self):
        self.answers, self.sqlstate, self.error, self.committed = [], None, None, False

    def describe(self):
        if self.sqlstate:
            answers = f" after answers {json.dumps(self.answers, default=str)[:400]}" if self.answers else ""
            return f"SQL error {self.sqlstate}: {self.error}{answers}"
        return "answers " + json.dumps(self.answers, default=str)[:600] + (" (committed)" if self.committed else "")


def run_caller(conn, fn, out):
    """Runs fn(conn) in the caller's open transaction; commits on answers, rolls back on an
    SQL error (as an application does)."""
    try:
        out.answers = fn(conn)
    except psycopg.Error as e:
        out.sqlstate, out.error = e.sqlstate, str(e).splitlines()[0]
        conn.execute("ROLLBACK")
        return
    try:
        conn.execute("COMMIT")
        out.committed = True
    except psycopg.Error as e:  # a failure at commit is an SQL error too
        out.sqlstate, out.error = e.sqlstate, "at COMMIT: " + str(e).splitlines()[0]
        conn.execute("ROLLBACK")


def wait_blocked(pid):
    """Waits (bounded) until backend pid waits for a lock."""
    deadline = time.time() + WAIT_S
    while time.time() < deadline:
        if one(admin, "SELECT cardinality(pg_blocking_pids(%s)) > 0", (pid,)):
            return True
        time.sleep(0.02)
    return False


def hold_row(conn, todo_id):
    """Session 1: a transaction holding the row lock of `todo_id`."""
    conn.execute("BEGIN")
    conn.execute("SELECT 1 FROM todo.todos WHERE tenant_id = %s AND id = %s FOR UPDATE", (TENANT, todo_id))


def blocked_call(kind, name, fn, expected):
    """statement_timeout / cancel / lock_timeout: #1 is locked by another session; the
    caller's call writes #3 and the locked #1."""
    reset()
    before = state()
    holder, caller = connect("postgres"), connect()
    hold_row(holder, 1)
    begin(caller, "agent-x")
    if kind == "statement_timeout":
        caller.execute("SET LOCAL statement_timeout = '300ms'")
    elif kind == "lock_timeout":
        caller.execute("SET LOCAL lock_timeout = '200ms'")
    out = Outcome()
    if kind == "cancel":
        t = threading.Thread(target=run_caller, args=(caller, lambda c: fn(c, 3, 1), out))
        t.start()
        blocked = wait_blocked(caller.info.backend_pid)
        if blocked:
            admin.execute("SELECT pg_cancel_backend(%s)", (caller.info.backend_pid,))
        else:
            holder.execute("ROLLBACK")  # never blocked: let it finish
        t.join(WAIT_S)
        check(f"{kind}: {name}: the caller waited for the row lock", blocked and not t.is_alive())
    else:
        run_caller(caller, lambda c: fn(c, 3, 1), out)
    if holder.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        holder.execute("ROLLBACK")
    check(f"{kind}: {name}: raises SQLSTATE {expected}", out.sqlstate == expected, out.describe())
    after = state()
    check(f"{kind}: {name}: nothing of the call is committed", after == before,
          f"before {before} after {after}")
    holder.close()
    caller.close()


def deadlock(name, fn):
    """Caller A locks #1, caller B locks #2; A calls the surface on #2 (other write: #3), then
    B on #1 (other write: #4). One of them is the deadlock's victim."""
    reset()
    a, b = connect(), connect()
    begin(a, "agent-a")
    begin(b, "agent-b")
    a.execute("SELECT 1 FROM todo.todos WHERE id = 1 FOR UPDATE")
    b.execute("SELECT 1 FROM todo.todos WHERE id = 2 FOR UPDATE")
    out = {"a": Outcome(), "b": Outcome()}
    ta = threading.Thread(target=run_caller, args=(a, lambda c: fn(c, 3, 2), out["a"]))
    ta.start()
    a_blocked = wait_blocked(a.info.backend_pid)
    tb = threading.Thread(target=run_caller, args=(b, lambda c: fn(c, 4, 1), out["b"]))
    tb.start()
    ta.join(WAIT_S)
    tb.join(WAIT_S)
    hung = ta.is_alive() or tb.is_alive()
    for conn, t in ((a, ta), (b, tb)):  # never leave a test hanging
        if t.is_alive():
            admin.execute("SELECT pg_cancel_backend(%s)", (conn.info.backend_pid,))
            t.join(WAIT_S)
    check(f"deadlock: {name}: both calls ended", a_blocked and not hung)
    victims = [k for k, o in out.items() if o.sqlstate == "40P01"]
    detail = f"a: {out['a'].describe()}; b: {out['b'].describe()}"
    check(f"deadlock: {name}: exactly one caller gets SQLSTATE 40P01", len(victims) == 1, detail)
    # a surface that turns the deadlock into an answer: its caller is the victim all the same
    told = [k for k, o in out.items() if "deadlock detected" in json.dumps(o.answers, default=str)]
    if len(victims) == 1 or (not victims and len(told) == 1):
        v = (victims or told)[0]
        s = "b" if v == "a" else "a"
        check(f"deadlock: {name}: the other caller's call succeeds after",
              out[s].sqlstate is None and out[s].committed, detail)
        after = {r[0]: r for r in state()["todos"]}
        # the victim wrote its other todo and the survivor's locked row; neither is changed
        v_other, v_target = (3, 2) if v == "a" else (4, 1)
        s_other, s_target = (4, 1) if v == "a" else (3, 2)
        check(f"deadlock: {name}: the victim's whole call is rolled back",
              after[v_other][2] == "pending" and after[v_target][2] == "pending", str(list(after.values())))
        check(f"deadlock: {name}: the survivor's writes are committed",
              after[s_other][2] != "pending" and after[s_target][2] != "pending", str(list(after.values())))
    a.close()
    b.close()


def write_skew(name, fn):
    """Two SERIALIZABLE callers read #1…#4 through the surface; the first writes #3 and #1 and
    commits; the second then writes #4 and #2 (rows the first read, having read the rows the
    first wrote): it is the pivot of a dangerous structure, 40001."""
    reset()
    t1, t2 = connect(), connect()
    begin(t1, "agent-a", "SERIALIZABLE")
    begin(t2, "agent-b", "SERIALIZABLE")
    read = reader_of(name)
    read(t1)
    read(t2)
    first = Outcome()
    run_caller(t1, lambda c: fn(c, 3, 1), first)
    check(f"serialization: {name}: the first writer commits", first.committed and first.sqlstate is None,
          first.describe())
    after_first = state()
    second = Outcome()
    run_caller(t2, lambda c: fn(c, 4, 2), second)
    check(f"serialization: {name}: the second writer gets SQLSTATE 40001", second.sqlstate == "40001",
          second.describe())
    # an answer that carries the failure (ERR: line, 400, error object) is the defect even
    # when COMMIT then fails too: the model was told something the caller must retry
    swallowed = "could not serialize" in json.dumps(second.answers, default=str)
    check(f"serialization: {name}: no answer carries the serialization failure", not swallowed,
          second.describe())
    after = state()
    check(f"serialization: {name}: the second writer commits nothing", after == after_first,
          f"after the first {after_first} after the second {after}")
    t1.close()
    t2.close()


def claim_conflict():
    """agent-a holds a live claim on #1; agent-b acts on it through every surface."""
    reset()
    holder = connect()
    begin(holder, "agent-a")
    holder.execute("SELECT * FROM todo.claim(1)")
    holder.execute("COMMIT")
    holder.close()
    before = state()
    b = connect()

    def answer(name, fn, ok):
        begin(b, "agent-b")
        out = Outcome()
        run_caller(b, fn, out)
        check(f"claim conflict: {name}: an answer, not an SQL error",
              out.sqlstate is None and out.answers and ok(out.answers[-1]), out.describe())
        check(f"claim conflict: {name}: nothing written", state() == before)

    def claimed_err(text):
        return "ERR:" in text and "claimed by agent-a" in text

    answer("writ /todo done 1 -> ERR: line", lambda c: [writ(c, "/todo done 1")], claimed_err)
    answer("writ /todo claim 1 -> ERR: line", lambda c: [writ(c, "/todo claim 1")], claimed_err)
    answer("tool finish_todo -> error code claimed", lambda c: [tool(c, "finish_todo", {"id": 1})],
           lambda r: isinstance(r, dict) and r.get("error", {}).get("code") == "claimed")
    answer("tool claim_todo -> error code claimed", lambda c: [tool(c, "claim_todo", {"id": 1})],
           lambda r: isinstance(r, dict) and r.get("error", {}).get("code") == "claimed")
    answer("REST PATCH /v1/todos/1 -> 409", lambda c: [rest(c, "PATCH", "/v1/todos/1", {"status": "completed"})],
           lambda r: r.get("status") == 409 and "claimed by agent-a" in json.dumps(r.get("body")))

    def raises(name, sql):
        begin(b, "agent-b")
        out = Outcome()
        run_caller(b, lambda c: [c.execute(sql).fetchall()], out)
        check(f"claim conflict: {name}: SQL error {CLAIM_SQLSTATE}", out.sqlstate == CLAIM_SQLSTATE,
              out.describe())
        check(f"claim conflict: {name}: nothing written", state() == before)

    raises("todo.finish(1)", "SELECT todo.finish(1)")
    raises("todo.claim(1)", "SELECT * FROM todo.claim(1)")
    raises("plain UPDATE status", "UPDATE todo.todos SET status = 'completed' WHERE id = 1")
    b.close()


@pytest.mark.parametrize("kind,expected", [("statement_timeout", "57014"), ("cancel", "57014"),
                                           ("lock_timeout", "55P03")])
def test_a_blocked_call_raises_and_commits_nothing(kind, expected):
    for name, fn in {**ADD_VARIANTS, **VARIANTS}.items():
        blocked_call(kind, name, fn, expected)


def test_deadlock_victim_raises_40P01_and_commits_nothing():
    for name, fn in VARIANTS.items():
        deadlock(name, fn)


def test_write_skew_second_writer_raises_40001():
    for name, fn in VARIANTS.items():
        write_skew(name, fn)


def test_claim_conflict_is_an_answer_or_55006():
    claim_conflict()
