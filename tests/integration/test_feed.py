"""feed: `pg_todos serve` follows the log (no NOTIFY) under load. 100 event streams, 50 of each of
two tenants, while 8 writers (4 per tenant, each on a conversation of its own) add todos in
three rounds; between the rounds the service restarts (each stream reconnects with its
Last-Event-ID, on the same port) and then the database restarts (the streams stay; the
writers reconnect). At the end, for every stream:
- it saw every conversation of its tenant with its whole final list (nothing missed across
  either restart);
- it never saw a conversation of the other tenant;
- each conversation's list only grew from one message to the next (the writers only add): no
  older state after a newer one, so changes came in commit order.

Run twice: with the default feed (`--feed log`: the hubs' cursors probed every tick) and with
`--feed logical` (todo.events decoded from a replication slot: wal_level = logical, the
publication, the service's role with REPLICATION), whose slot is dropped mid-run (after the
second round): the service says it follows the cursors instead, and nothing is missed.

Sizes: PGTODOS_FEED=STREAMSxWRITERSxTODOS (100x8x6: todos per writer per round)."""
import os
import threading
import time

import psycopg
import pytest

import web
from checks import check

STREAMS, WRITERS, TODOS = map(int, os.environ.get("PGTODOS_FEED", "100x8x6").split("x"))
TENANTS = ("acme", "globex")


def write_round(cluster, db, rnd, errors):
    """Each writer adds TODOS todos to its conversation, one transaction each."""
    def writer(i):
        tenant = TENANTS[i % 2]
        try:
            with cluster.connect(db, user="agent_login") as c:
                for k in range(TODOS):
                    with c.transaction():
                        c.execute("SELECT todo.set_context(%s, %s, 'writer')", (tenant, f"w{i}"))
                        c.execute("SELECT todo.todo_writ(%s)", (f"/todo add round {rnd} todo {k}",))
        except psycopg.Error as e:
            errors.append(f"writer {i}: {e}")
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def final_lists(cluster, db):
    """Each tenant's conversations and their todos' subjects, as the database has them."""
    out = {}
    with cluster.connect(db) as c:  # a superuser: the tenant by its column
        for tenant in TENANTS:
            rows = c.execute("SELECT conversation_id, subject FROM todo.todos WHERE tenant_id = %s ORDER BY id",
                             (tenant,)).fetchall()
            lists = {}
            for conv, subject in rows:
                lists.setdefault(conv, []).append(subject)
            out[tenant] = lists
    return out


def drop_slot(cluster, db):
    """Drops the service's slot (between two of its reads: it is held only while one runs)."""
    for _ in range(100):
        r = cluster.psql("SELECT pg_drop_replication_slot('pg_todos_feed')", db=db, check=False)
        if r.returncode == 0:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("source", ["log", "logical"])
def test_streams_under_load_miss_nothing_across_restarts(new_cluster, cli, source):
    logical = source == "logical"
    cluster = new_cluster(f"feed-{source}", conf=["wal_level = logical", "max_replication_slots = 4"] if logical else [])
    db = cluster.database("feed", tenants=list(TENANTS))
    tokens = {t: cluster.psql(f"SELECT token FROM todo.create_token('{t}', 'watcher')", db=db).strip() for t in TENANTS}
    per = str(STREAMS)
    flags = ("--max-streams", str(max(256, STREAMS)), "--max-streams-per-tenant", per, "--max-streams-per-token", per,
             "--tenant-catch-ups", per)
    if logical:
        cluster.psql("CREATE PUBLICATION pg_todos_feed FOR TABLE todo.events WITH (publish = 'insert');"
                     "ALTER ROLE agent_login REPLICATION;", db=db)
        flags += ("--feed", "logical")
    server = web.Server(cli, db, *flags)
    port = server.port
    # each stream: its tenant and the messages of every connection it made, in order
    streams = [(TENANTS[i % 2], [web.Sse(tokens[TENANTS[i % 2]], port=port)]) for i in range(STREAMS)]
    opened = all(s[-1].wait(lambda d: d.get("type") == "server.connected", 15) is not None for _, s in streams)
    check(f"{STREAMS} streams open", opened, "")
    errors = []
    try:
        write_round(cluster, db, 1, errors)
        time.sleep(1)
        # the service restarts: every stream reconnects with its last id
        server.stop()
        for _, s in streams:
            s[-1].ended.wait(10)
        server = web.Server(cli, db, *flags, port=port)
        for tenant, s in streams:
            s.append(web.Sse(tokens[tenant], last_event_id=s[-1].last_id(), port=port))
        reconnected = all(s[-1].status == 200 for _, s in streams)
        check("every stream reconnects to the restarted service with its Last-Event-ID", reconnected,
              [s[-1].status for _, s in streams if s[-1].status != 200][:5])
        write_round(cluster, db, 2, errors)
        time.sleep(1)
        if logical:
            slot = cluster.psql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'pg_todos_feed' "
                                "AND confirmed_flush_lsn IS NOT NULL", db=db).strip()
            check("the logical feed made its slot and reads it", slot == "1", slot)
            check("the logical feed followed the slot, not the cursors, before it was dropped",
                  "following the log's cursors instead" not in server.logtext(), server.logtext()[-2000:])
            check("the slot is dropped mid-run", drop_slot(cluster, db), "")
            write_round(cluster, db, 2, errors)
            check("with its slot gone, the feed says it follows the cursors instead",
                  server.wait_log("following the log's cursors instead", 10), server.logtext()[-2000:])
        # the database restarts under the open streams
        cluster.restart()
        write_round(cluster, db, 3, errors)
        want = final_lists(cluster, db)
        total = sum(len(v) for lists in want.values() for v in lists.values())
        rounds = 4 if logical else 3
        check(f"the writers wrote {WRITERS * TODOS * rounds} todos, with no error", not errors and
              total == WRITERS * TODOS * rounds, (errors[:3], total))

        def seen(s):
            """conversation -> the lists (subjects) of each todo.updated, in the order received."""
            out = {}
            for conn in s:
                with conn.lock:
                    msgs = list(conn.messages)
                for _, _, d in msgs:
                    if d.get("type") == "todo.updated":
                        p = d["properties"]
                        out.setdefault(p["sessionID"], []).append([t["content"] for t in p["todos"]])
            return out

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all(seen(s).get(conv, [[]])[-1] == todos for tenant, s in streams for conv, todos in want[tenant].items()):
                break
            time.sleep(0.25)
        missing, foreign, shrank = [], [], []
        for n, (tenant, s) in enumerate(streams):
            got = seen(s)
            for conv, todos in want[tenant].items():
                if got.get(conv, [[]])[-1] != todos:
                    missing.append((n, conv, len(got.get(conv, [[]])[-1]), len(todos)))
            other = TENANTS[1 - TENANTS.index(tenant)]
            foreign += [(n, conv) for conv in got if conv in want[other]]
            for conv, lists in got.items():
                if any(len(b) < len(a) for a, b in zip(lists, lists[1:])):
                    shrank.append((n, conv, [len(x) for x in lists]))
        check("every stream ends with every list of its tenant, whole (nothing missed across the restarts)",
              not missing, missing[:5])
        check("no stream saw a conversation of the other tenant", not foreign, foreign[:5])
        check("each list only grew from one message to the next (commit order)", not shrank, shrank[:3])
    finally:
        for _, s in streams:
            s[-1].close()
        server.stop()
