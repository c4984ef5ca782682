#!/usr/bin/env python3
"""concurrency: many sessions at once, as the plain role agent_login, mixing writ commands,
whole-list replaces, plan tools, REST patches, completes and reopens across shared and
separate conversations and two tenants. Each operation is one transaction; serialization
failures and deadlocks are retried (and counted). Afterwards, as a superuser:
  - todo.verify() finds nothing (stamps agree with status, counters, the event log's chain);
  - ids are unique per tenant;
  - every replaced list equals one list that some session submitted (no interleaving);
  - the event log accounts for every todo that was ever inserted;
  - no session saw an error it did not retry;
  - no two writers deadlocked (every call takes its locks in one order).
Sessions and operations: PGTODOS_CONCURRENCY=SESSIONSxOPERATIONS (8x400).
"""
import os
import random
import threading
import time
from collections import Counter

import psycopg
from psycopg.types.json import Jsonb

from checks import check

DB = "concurrency"
SESSIONS, OPS = map(int, os.environ.get("PGTODOS_CONCURRENCY", "8x400").split("x"))
TENANTS = ["t1", "t2"]
LISTS = ["list-0", "list-1"]
WORDS = ["plan", "build", "test", "ship", "fix", "review", "deploy", "write"]
RETRYABLE = {"40001", "40P01"}

lock = threading.Lock()
submitted = {}          # (tenant, conversation) -> [list as submitted, ...]
stats = Counter()
failures = []


def in_tx(conn, tenant, conversation, agent, turn, fn):
    """Runs fn(cursor) in one transaction with the context set; retries deadlocks and
    serialization failures."""
    for attempt in range(20):
        try:
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SELECT todo.set_context(%s, %s, %s, %s)", (tenant, conversation, agent, turn))
                return fn(cur)
        except psycopg.Error as e:
            state = e.sqlstate or ""
            if state in RETRYABLE:
                with lock:
                    stats["retried " + state] += 1
                time.sleep(random.random() * 0.01 * (attempt + 1))
                continue
            raise
    raise RuntimeError("gave up after 20 retries")


def session(n):
    rnd = random.Random(n)
    conn = psycopg.connect(dbname=DB, user="agent_login", autocommit=True)
    agent, turn = f"agent-{n}", f"turn-{n}"
    for i in range(OPS):
        tenant = rnd.choice(TENANTS)
        kind = rnd.choices(["writ_add", "writ_mark", "replace", "plan", "rest"], [3, 5, 3, 2, 1])[0]
        try:
            if kind == "writ_add":
                conv = rnd.choice(["shared", f"own-{n}"])
                msg = f"/todo add {rnd.choice(WORDS)} {n}-{i}"
                if rnd.random() < 0.3:
                    msg += f"\nbody of {n}-{i}\n/endtodo\n/todo start {n}-{i}"
                in_tx(conn, tenant, conv, agent, turn, lambda c: c.execute("SELECT todo.todo_writ(%s)", (msg,)))
            elif kind == "writ_mark":
                conv = rnd.choice(["shared", f"own-{n}"])
                verb = rnd.choice(["start", "done", "cancel", "reopen", "start", "done"])
                msg = "\n".join(f"/todo {verb} {rnd.randint(1, 60)}" for _ in range(rnd.randint(1, 3)))
                in_tx(conn, tenant, conv, agent, turn, lambda c: c.execute("SELECT todo.todo_writ(%s)", (msg,)))
            elif kind == "replace":
                conv = rnd.choice(LISTS)
                items = [{"content": rnd.choice(WORDS), "status": rnd.choice(["pending", "in_progress", "completed", "cancelled"]),
                          "priority": rnd.choice(["high", "medium", "low"])} for _ in range(rnd.randint(0, 6))]

                def replace(c):
                    c.execute("SELECT todo.call('todowrite', %s)", (Jsonb({"todos": items}),))
                    out = c.fetchone()[0]
                    assert "error" not in out, out
                # no turn: the plan tools of a turn must not reach the replaced lists
                in_tx(conn, tenant, conv, agent, None, replace)
                with lock:
                    submitted.setdefault((tenant, conv), []).append(
                        [(t["content"], t["status"], t["priority"]) for t in items])
            elif kind == "plan":
                def plan(c):
                    if rnd.random() < 0.5:
                        c.execute("SELECT todo.call('create_todo', %s)",
                                  (Jsonb({"items": [{"title": f"step {n}-{i}-{k}"} for k in range(rnd.randint(1, 3))]}),))
                    else:
                        c.execute("SELECT todo.call('list_todo', '{}')")
                        items = c.fetchone()[0]["items"]
                        if items:
                            c.execute("SELECT todo.call('complete_todo', %s)",
                                      (Jsonb({"todoId": rnd.choice(items)["id"], "outcome": "done by the test",
                                              "status": rnd.choice(["completed", "cancelled"])}),))
                in_tx(conn, tenant, "shared", agent, turn, plan)
            else:
                def rest(c):
                    c.execute("SELECT todo.rest('GET', '/v1/todos?conversation_id=shared&limit=20')")
                    todos = c.fetchone()[0]["body"]["todos"]
                    if todos:
                        c.execute("SELECT todo.rest('PATCH', %s, %s)",
                                  (f"/v1/todos/{rnd.choice(todos)['id']}",
                                   Jsonb({"status": rnd.choice(["pending", "in_progress", "completed", "canceled"])})))
                in_tx(conn, tenant, "shared", agent, turn, rest)
            with lock:
                stats[kind] += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported
            with lock:
                failures.append(f"session {n} op {i} ({kind}): {type(e).__name__}: {e}")
    conn.close()


def test_concurrent_sessions_keep_the_invariants(database):
    database(DB, tenants=TENANTS)
    start = time.time()
    threads = [threading.Thread(target=session, args=(n,)) for n in range(SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - start

    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as admin:
        c = admin.cursor()
        c.execute("SELECT tenant_id, todo_id, problem FROM todo.verify()")
        problems = c.fetchall()
        check("todo.verify() finds no broken invariant", not problems, problems[:10])
        c.execute("SELECT count(*), count(DISTINCT (tenant_id, id)) FROM todo.todos")
        total, distinct = c.fetchone()
        check("ids are unique per tenant", total == distinct, (total, distinct))
        bad_lists = []
        for tenant in TENANTS:
            for conv in LISTS:
                c.execute("""SELECT coalesce(json_agg(json_build_array(subject,
                                   CASE status WHEN 'canceled' THEN 'cancelled' ELSE status END, coalesce(priority, 'medium'))
                                   ORDER BY position, id), '[]')
                             FROM todo.todos WHERE tenant_id = %s AND conversation_id = %s""", (tenant, conv))
                final = [tuple(x) for x in c.fetchone()[0]]
                options = submitted.get((tenant, conv), [])
                if options and final not in options:
                    bad_lists.append((tenant, conv, final))
        check("every replaced list equals a list some session submitted", not bad_lists, bad_lists[:3])
        c.execute("""SELECT count(*) FROM (SELECT DISTINCT tenant_id, todo_id FROM todo.events) e
                     LEFT JOIN todo.todos t ON t.tenant_id = e.tenant_id AND t.id = e.todo_id
                     WHERE t.id IS NULL AND NOT EXISTS (SELECT 1 FROM todo.events d WHERE d.tenant_id = e.tenant_id
                                                         AND d.todo_id = e.todo_id AND d.action = 'delete')""")
        vanished = c.fetchone()[0]
        check("every todo missing from the table has its delete event", vanished == 0, vanished)
        c.execute("SELECT count(*), (SELECT count(*) FROM todo.events) FROM todo.todos")
        rows, events = c.fetchone()
    check("no session saw an error it did not retry", not failures, failures[:5])
    # every call takes its locks in one order (src/store/locks.rs): writers of one tenant
    # never deadlock each other (the retry stays, so a deadlock is counted, not fatal)
    check("no deadlock between writers (one lock order)", stats["retried 40P01"] == 0, stats["retried 40P01"])

    ops = sum(stats[k] for k in ["writ_add", "writ_mark", "replace", "plan", "rest"])
    print(f"sessions: {SESSIONS}, operations: {ops} in {elapsed:.1f} s ({ops / elapsed:.0f}/s), "
          f"todos left: {rows}, events: {events}")
    print("by kind: " + ", ".join(f"{k} {stats[k]}" for k in ["writ_add", "writ_mark", "replace", "plan", "rest"]))
    print("retried: " + (", ".join(f"{k.split()[1]} {v}" for k, v in stats.items() if k.startswith("retried")) or "none"))
