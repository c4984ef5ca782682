#!/usr/bin/env python3
"""crash: on a cluster of its own with fsync and synchronous_commit on, four writers (the plain
role agent_login) add and complete todos through todo_writ and record every write the server
acknowledged (its COMMIT returned). The postmaster is killed with SIGKILL in the middle of the
load, the cluster restarts (crash recovery), and every acknowledged write must be there;
amcheck verifies every btree index (heapallindexed) and the heap; todo.verify() is clean.
"""
import threading
import time

import psycopg

from checks import check


def load(db, seconds, acks, counts):
    lock = threading.Lock()
    stop = time.time() + seconds

    def writer(w):
        n = 0
        while time.time() < stop:
            try:
                conn = psycopg.connect(dbname=db, user="agent_login", autocommit=True, connect_timeout=2)
            except psycopg.Error:
                time.sleep(0.05)
                continue
            try:
                while time.time() < stop:
                    n += 1
                    subject = f"crash {w}-{n}"
                    with conn.transaction():
                        cur = conn.cursor()
                        cur.execute("SELECT todo.set_context('crash', %s, %s)", (f"conv-{w}", f"writer-{w}"))
                        cur.execute("SELECT todo.todo_writ(%s)", (f"/todo add {subject}",))
                        out = cur.fetchone()[0]
                        todo_id = int(out.split("#")[1].split(" ")[0])
                        if n % 3 == 0:
                            cur.execute("SELECT todo.todo_writ(%s)", (f"/todo done {todo_id}",))
                    # COMMIT returned: acknowledged
                    with lock:
                        acks.append({"subject": subject, "id": todo_id, "done": n % 3 == 0})
            except psycopg.Error:
                with lock:
                    counts["in_flight_lost"] += 1  # connection died mid-transaction: not acknowledged
                time.sleep(0.05)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"load: {len(acks)} writes acknowledged, {counts['in_flight_lost']} transactions cut by the crash")


def test_acknowledged_writes_survive_a_sigkill_of_the_postmaster(new_cluster):
    cluster = new_cluster("crash", conf=["fsync = on", "synchronous_commit = on"])
    db = cluster.database("crash", tenants=["crash"])
    check("the cluster runs with fsync on", cluster.psql("SHOW fsync").strip() == "on")
    acks, counts = [], {"in_flight_lost": 0}
    loader = threading.Thread(target=load, args=(db, 6, acks, counts))
    loader.start()
    time.sleep(3)
    print(f"==> SIGKILL postmaster {cluster.postmaster_pid()} in the middle of the load")
    cluster.kill()
    loader.join()
    cluster.start()
    recovery = [line for line in cluster.log().splitlines()
                if "database system was interrupted" in line or "redo starts" in line or "redo done" in line]
    print("\n".join(recovery[:3]))
    check("the restart recovered from the crash (redo in the log)", recovery, cluster.log()[-1000:])
    with psycopg.connect(dbname=db, user="postgres", autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("SELECT subject, id, status FROM todo.todos WHERE tenant_id = 'crash'")
        rows = {s: (i, st) for s, i, st in cur.fetchall()}
        missing = [a for a in acks if a["subject"] not in rows or rows[a["subject"]][0] != a["id"]]
        undone = [a for a in acks if a["done"] and a["subject"] in rows and rows[a["subject"]][1] != "completed"]
        cur.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        cur.execute("""SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                        JOIN pg_am am ON am.oid = c.relam
                       WHERE c.relnamespace = 'todo'::regnamespace AND am.amname = 'btree'""")
        indexes = [r[0] for r in cur.fetchall()]
        for ix in indexes:
            cur.execute("SELECT bt_index_check(%s::regclass, true)", (f"todo.{ix}",))
        cur.execute("""SELECT c.relname, count(v.*) FROM pg_class c
                        CROSS JOIN LATERAL verify_heapam(c.oid) v
                       WHERE c.relnamespace = 'todo'::regnamespace AND c.relkind = 'r' GROUP BY 1""")
        heap_problems = cur.fetchall()
        cur.execute("SELECT count(*) FROM todo.verify()")
        invariants = cur.fetchone()[0]
    for name, ok, detail in [
        (f"all {len(acks)} acknowledged adds are present after recovery", not missing, missing[:5]),
        (f"all {sum(a['done'] for a in acks)} acknowledged completions are present", not undone, undone[:5]),
        (f"amcheck: {len(indexes)} btree indexes verified with heapallindexed, heap verified", not heap_problems, heap_problems),
        ("todo.verify() finds no broken invariant", invariants == 0, invariants),
        ("the load really ran", len(acks) > 100, len(acks)),
    ]:
        check(name, ok, detail)
    print(f"crash: {len(acks)} writes acknowledged before the SIGKILL, {len(rows)} todos found after recovery "
          f"({len(rows) - len(acks)} more: committed but not yet acknowledged), lost: {len(missing)}")
