#!/usr/bin/env python3
"""A supervisor and two sub-agents sharing one todo list, with plain psycopg.

  supervisor  plans with todo.todo_writ: the model's message holds /todo add … commands,
              then /todo block (publish waits for build) and /todo subtask (ship has one);
  sub-agents  each start from the "Open todos" block (todo.todo_open_block) in the prompt the
              runtime builds for them, then mark progress with the writ: /todo claim takes
              the next ready todo (SKIP LOCKED: never the one the other agent holds),
              /todo done finishes it;
  listener    follows the change feed: every 0.2 s it asks todo.changes_since(cursor) for
              the lists that transactions committed since its cursor changed (never a
              rolled-back one; each list whole) and prints progress from them.

At the end the supervisor checks the final state and exits 1 unless every todo is completed
exactly once, by a claim, publish after build and ship after its subtask.
Usage: examples/supervisor.py --dbname DB --user ROLE --tenant T   (libpq env for the host)

ROLE is the app's: it reads todo.todos and todo.events with plain SQL, so it needs an app's
role (todo.grant_usage(role) for any tenant, or todo.grant_usage(role, T) bound to T). Every
call runs in a transaction that sets the context first: the context lasts one transaction.
"""
import argparse
import os
import re
import threading
import time

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("--dbname", required=True)
ap.add_argument("--user", required=True)
ap.add_argument("--tenant", required=True)
opts = ap.parse_args()
CONV = f"release-{os.getpid()}"
REFUSED = []


def connect():
    return psycopg.connect(dbname=opts.dbname, user=opts.user, autocommit=True)


def as_agent(conn, agent, sql, *args):
    """One transaction with the app's context: tenant, conversation, agent."""
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s, %s, 'turn-1')", (opts.tenant, CONV, agent))
        return conn.execute(sql, args).fetchone()[0]


def writ(conn, agent, message):
    return as_agent(conn, agent, "SELECT todo.todo_writ(%s)", message)


def changes(conn, cursor):
    """What changed since `cursor` (None: nothing yet, only the current cursor): the new
    cursor and the changed lists, [{"conversation_id", "todos": [OpenCode todo items]}]. One
    transaction acting for the tenant: the context lasts one transaction."""
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s)", (opts.tenant,))
        feed = conn.execute("SELECT todo.changes_since(%s::text)", (cursor,)).fetchone()[0]
    return feed["cursor"], feed["changes"]


def listener(stop, ready, lines):
    """Follows the change feed, as an app's UI would: no LISTEN (the store sends no NOTIFY by
    default), a read of the log every 0.2 s from the cursor of the previous one. Prints a
    line for each todo of the release whose status changed since the last list it saw."""
    with connect() as conn:
        cursor, _ = changes(conn, None)
        ready.set()
        shown = {}  # todo id -> the status last printed
        while True:
            stopping = stop.wait(0.2)   # one more read after the stop: nothing is left unread
            cursor, changed = changes(conn, cursor)
            for change in changed:
                if change["conversation_id"] != CONV:
                    continue
                todos = change["todos"]
                done = sum(t["status"] == "completed" for t in todos)
                for t in todos:
                    if shown.get(t["id"]) != t["status"]:
                        shown[t["id"]] = t["status"]
                        line = f"  progress {done}/{len(todos)}: #{t['id']} {t['content']} → {t['status']}"
                        lines.append(line)
                        print(line)
            if stopping:
                return


def sub_agent(name, log):
    with connect() as conn:
        block = as_agent(conn, name, "SELECT todo.todo_open_block(%s)", CONV)
        print(f"--- {name}'s prompt ---\n[DELEGATION CONTEXT]\n{block}\n[END DELEGATION CONTEXT]\n---")
        idle = 0
        while idle < 30:
            out = writ(conn, name, "/todo claim")
            m = re.search(r"OK: claimed #(\d+) — (.*) \(fence (\d+)", out)
            if not m:
                # nothing ready: the rest waits for what the other agent holds, or is done
                if as_agent(conn, name, "SELECT todo.todo_open_block(%s)", CONV) == "":
                    return
                idle += 1
                time.sleep(0.1)
                continue
            idle = 0
            tid, subject = int(m[1]), m[2]
            time.sleep(0.3)   # the work (longer than the feed's 0.2 s: the listener sees it under way)
            out = writ(conn, name, f"I finished it.\n/todo done {tid}")
            if f"OK: completed #{tid}" not in out:
                REFUSED.append(f"{name}: /todo done {tid} refused:\n{out}")   # seen by main()
                return
            log.append((time.monotonic(), name, subject))


def main():
    stop, ready, progress = threading.Event(), threading.Event(), []
    lt = threading.Thread(target=listener, args=(stop, ready, progress))
    lt.start()
    if not ready.wait(10):
        raise SystemExit("the listener could not start")
    with connect() as sup:
        plan = writ(sup, "supervisor", """I'll split the release into steps.
/todo add build the artifacts
/todo add publish the artifacts
/todo add write the changelog
/todo add ship the release""")
        print(plan)
        ids = {s: int(i) for i, s in re.findall(r"OK: added #(\d+) — (.*)", plan)}
        follow = writ(sup, "supervisor", f"""Publishing needs the build; shipping needs a tag.
/todo block {ids['publish the artifacts']} on {ids['build the artifacts']}
/todo subtask {ids['ship the release']}: tag the commit""")
        print(follow)
        ids["tag the commit"] = int(re.search(r"OK: added #(\d+)", follow)[1])
        log = []
        agents = [threading.Thread(target=sub_agent, args=(n, log)) for n in ("sub-1", "sub-2")]
        for a in agents:
            a.start()
        for a in agents:
            a.join()
        time.sleep(0.5)
        stop.set()
        lt.join()
        print(writ(sup, "supervisor", "/todo list all"))
        with sup.transaction():
            sup.execute("SELECT todo.set_context(%s, %s)", (opts.tenant, CONV))
            state = sup.execute(
                """SELECT t.subject, t.status, t.completed_at,
                          (SELECT count(*) FROM todo.events e WHERE e.tenant_id = t.tenant_id AND e.todo_id = t.id
                              AND e.new_status = 'completed' AND e.old_status <> 'completed'),
                          (SELECT count(*) FROM todo.events e WHERE e.tenant_id = t.tenant_id AND e.todo_id = t.id
                              AND e.changes ? 'fence')
                     FROM todo.todos t WHERE t.conversation_id = %s""", (CONV,)).fetchall()
            preamble = sup.execute("SELECT todo.todo_open_preamble(%s)", (CONV,)).fetchone()[0]
    at = {s: c for s, _, c, _, _ in state}
    problems = list(REFUSED)
    if sorted(at) != sorted(ids):
        problems.append(f"the list is not the plan: {sorted(at)}")
    for subject, status, _, completions, claims in state:
        if status != "completed" or completions != 1 or claims != 1:
            problems.append(f"{subject}: {status}, completed {completions}×, claimed {claims}×")
    if at["publish the artifacts"] < at["build the artifacts"]:
        problems.append("publish was completed before build")
    if at["ship the release"] < at["tag the commit"]:
        problems.append("ship was completed before its subtask")
    if preamble != "":
        problems.append(f"the supervisor's preamble still shows open todos:\n{preamble}")
    if not any(f"progress {len(ids)}/{len(ids)}" in line for line in progress):
        problems.append("the listener never saw the last todo completed")
    for p in problems:
        print("FAILED:", p)
    if problems:
        raise SystemExit(1)
    print(f"ok: {len(ids)} todos completed exactly once, by claims, in dependency order; "
          f"{len(progress)} progress lines from the change feed; who did what: "
          f"{sorted((s, n) for _, n, s in log)}")


main()
