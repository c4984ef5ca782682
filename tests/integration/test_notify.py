"""notify: no NOTIFY in the write path by default, and with `todo.notify = hint` a private,
throttled hint that carries nothing.

- A role bound to tenant B LISTENs on every channel name it can find for tenant A: the name
  0.9 used (`todo_` || md5(tenant)), hashes of A's id, A's id itself, and its own channel.
  Tenant A writes through every surface and by plain SQL. B hears nothing, with notify off
  and with notify hint; B cannot ask todo.channel() for A, nor read the key.
- With notify off, even a listener on A's own channel hears nothing.
- With notify hint, A's own listener (the channel from todo.channel(), acting for A) hears
  hints after commit only, with an empty payload, at most one per tenant per 100 ms from one
  backend; a rolled-back write hints nothing.
- Only a superuser may turn hints on: an agent cannot make every tenant's writers commit in
  turn."""
import hashlib
import time

import psycopg

from checks import check

WRITES = r"""
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ(E'/todo add one\n/todo add two');
COMMIT;
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.call('todowrite', '{"todos": [{"content": "one", "status": "completed", "priority": "high"}]}');
COMMIT;
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "pool", "conversation_id": null}');
COMMIT;
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
INSERT INTO todo.todos (subject) VALUES ('by SQL');
COMMIT;
"""


def names_for(tenant, own):
    """Every channel name a role of another tenant could derive for `tenant`."""
    md5 = hashlib.md5(tenant.encode()).hexdigest()
    sha = hashlib.sha256(tenant.encode()).hexdigest()
    return [f"todo_{md5}", md5, f"todo_{sha[:40]}", f"todo_{sha}"[:63], f"todo_{tenant}", tenant, "todo", own]


def heard(conn, timeout):
    got = []
    for n in conn.notifies(timeout=timeout):
        got.append((n.channel, n.payload))
    return got


def writes(cluster, db, notify):
    """A's writes, through psql as the app role (plain SQL included), under `notify`."""
    cluster.psql(f"ALTER ROLE agent_login IN DATABASE \"{db}\" SET todo.notify = '{notify}'", db=db)
    cluster.psql(WRITES, db=db, user="agent_login")


def test_another_tenant_hears_nothing_and_hints_carry_nothing(cluster):
    db = cluster.database("notify", tenants=["acme", "globex"])
    cluster.psql("DO $$ BEGIN CREATE ROLE globex_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
                 "SELECT todo.grant_usage('globex_app', 'globex');", db=db)
    spy = cluster.connect(db, user="globex_app")
    own = spy.execute("SELECT todo.channel()").fetchone()[0]
    try:
        spy.execute("SELECT todo.channel() FROM todo.set_context('acme') s")
        asked = "answered"
    except psycopg.Error as e:
        asked = e.sqlstate
    try:
        spy.execute("SELECT key FROM todo.channel_key")
        key = "read"
    except psycopg.Error as e:
        key = e.sqlstate
    check("a role bound to another tenant cannot ask todo.channel() for it (42501) nor read the key (42501)",
          (asked, key) == ("42501", "42501"), f"{asked} {key}")
    for name in names_for("acme", own):
        spy.execute(f'LISTEN "{name}"')
    with cluster.connect(db) as admin:
        channel = admin.execute("SELECT todo.channel() FROM todo.set_context('acme') s").fetchone()[0]
    check("acme's channel is none of the names another tenant can derive",
          channel not in names_for("acme", own) and channel.startswith("todo_") and len(channel) == 45, channel)
    owner = cluster.connect(db)
    owner.execute(f'LISTEN "{channel}"')

    writes(cluster, db, "off")
    off_spy, off_owner = heard(spy, 1.5), heard(owner, 0.1)
    check("notify off: no NOTIFY at all, not even on acme's own channel", (off_spy, off_owner) == ([], []),
          f"{off_spy} {off_owner}")

    writes(cluster, db, "hint")
    hint_spy, hint_owner = heard(spy, 1.5), heard(owner, 0.1)
    check("notify hint: the other tenant's role hears nothing on any name it can derive", hint_spy == [], hint_spy)
    check("notify hint: acme's listener hears its writes as hints with an empty payload",
          hint_owner and all(h == (channel, "") for h in hint_owner), hint_owner)
    spy.close()

    # throttled per tenant per backend: 30 committed writes within ~a second from one session
    # hint at most once per 100 ms; a rolled-back write hints nothing
    with cluster.connect(db, user="agent_login") as w:
        heard(owner, 0.1)
        started = time.monotonic()
        for i in range(30):
            with w.transaction():
                w.execute("SELECT todo.set_context('acme', 'conv-2', 'agent')")
                w.execute("SELECT todo.todo_writ(%s)", (f"/todo add burst {i}",))
        spent = time.monotonic() - started
        burst = heard(owner, 0.5)
        bound = int(spent / 0.1) + 1
        check(f"30 writes of one backend in {spent:.2f}s: at most {bound} hints (one per 100 ms)",
              1 <= len(burst) <= bound, f"{len(burst)} hints")
        time.sleep(0.15)
        with w.transaction():
            w.execute("SELECT todo.set_context('acme', 'conv-2', 'agent')")
            w.execute("SELECT todo.todo_writ('/todo add never')")
            raise psycopg.Rollback()
        check("a rolled-back write hints nothing", heard(owner, 0.5) == [], "")
    owner.close()

    # only a superuser turns hints on
    with cluster.connect(db, user="agent_login") as agent:
        try:
            agent.execute("SET todo.notify = 'hint'")
            outcome = "set"
        except psycopg.Error as e:
            outcome = e.sqlstate
    check("an agent's role cannot turn hints on (42501)", outcome == "42501", outcome)
