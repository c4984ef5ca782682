#!/usr/bin/env python3
"""big list: a list of 100,000 todos at the maximum field sizes (subject and active_form of
1,000 characters, description, outcome and completion_criteria of 20,000, metadata of 64 KB)
read through every read surface by an agent's own role (bound to its tenant, functions only).
Each read is bounded (docs/reliability.md, "Reads"): at most todo.max_read_todos todos,
fewer once their text passes todo.max_output_size bytes, and it says how many it left out.
Before, each of these reads built the whole list: 10,000 todos made TaskList's backend 918 MB,
and 60,000 aborted it and restarted every database of the server.

Each read runs in a fresh backend of a cluster with shared_buffers = 16MB; its peak resident
memory (VmHWM) less the backend's own after loading the library must stay within
BOUND_MB, and no backend may abort (the cluster's postmaster keeps its pid). Times are
printed (docs/reliability.md quotes them), never asserted.

The list is made by one INSERT … SELECT with the row triggers off (session_replication_role
= replica: the test reads, it does not need the event log), so it takes a minute, not an
hour. PGTODOS_BIG_LIST sets its length (default 100000).
"""
import os
import time

import psycopg
import pytest

import pg
from checks import check

DB = "biglist"
TODOS = int(os.environ.get("PGTODOS_BIG_LIST", "100000"))
BOUND_MB = 64
CONV = "huge"


def vm_hwm_mb(conn):
    """The backend's peak resident memory so far, in MB."""
    return pg.backend_peak_mb(conn)


@pytest.fixture(scope="module", autouse=True)
def big_cluster(cluster):
    with pg.own_cluster("biglist", conf=["shared_buffers = '16MB'"]) as c:
        c.database(DB)
        with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as conn:
            conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES ('big')")
            conn.execute("CREATE ROLE big_agent LOGIN")
            conn.execute("SELECT todo.grant_usage('big_agent', 'big', plain_sql => false)")
            started = time.monotonic()
            with conn.transaction():
                conn.execute("SET LOCAL session_replication_role = replica")
                conn.execute(
                    """INSERT INTO todo.todos (tenant_id, id, conversation_id, subject, description, active_form,
                                               status, position, completion_criteria, outcome, metadata)
                       SELECT 'big', g, %s, g || ' ' || f.subject, f.text, f.subject,
                              CASE WHEN g %% 10 = 0 THEN 'completed' WHEN g %% 10 = 1 THEN 'in_progress' ELSE 'pending' END,
                              g, f.text, f.text, f.metadata
                         FROM (SELECT repeat('s', 990) AS subject, repeat('d', 20000) AS text,
                                      jsonb_build_object('k', repeat('m', 65000)) AS metadata) f,
                              generate_series(1, %s) g""",
                    (CONV, TODOS))
                conn.execute("INSERT INTO todo.counters (tenant_id, last_id) VALUES ('big', %s)", (TODOS,))
            print(f"  {TODOS} todos made in {time.monotonic() - started:.0f} s")
            conn.execute("ANALYZE todo.todos")
        # one real write, so that the change feed has the list to send
        with psycopg.connect(dbname=DB, user="big_agent") as conn:
            conn.execute("SELECT todo.set_context('big', %s, 'agent-1')", (CONV,))
            conn.execute("SELECT todo.todo_writ('/todo add one more')")
        yield c


def postmaster_pid(c):
    with open(os.path.join(c.data, "postmaster.pid")) as f:
        return int(f.readline())


READS = [
    # (name, SQL run as the agent in conversation CONV, how the answer says it was cut)
    ("TaskList", "SELECT todo.call('TaskList', '{}')::text", "notice"),
    ("todoread", "SELECT todo.call('todoread', '{}')::text", "notice"),
    ("todolist__get", "SELECT todo.call('todolist__get', '{}')::text", "notice"),
    ("call_mcp TaskList", "SELECT todo.call_mcp('TaskList', '{}')::text", "text"),
    ("call_mcp todoread", "SELECT todo.call_mcp('todoread', '{}')::text", "text"),
    ("list_as opencode", f"SELECT todo.list_as('opencode', '{CONV}')::text", "notice"),
    ("list_as claude-tasks", f"SELECT todo.list_as('claude-tasks', '{CONV}')::text", "notice"),
    ("list_as cursor", f"SELECT todo.list_as('cursor', '{CONV}')::text", "notice"),
    ("list_as hermes", f"SELECT todo.list_as('hermes', '{CONV}')::text", "notice"),
    ("export_tasks", f"SELECT todo.export_tasks('{CONV}')::text", "notice"),
    ("changes_since, paged", "SELECT todo.changes_since('1:1:', NULL, 10)::text", None),
    ("changes_since", "SELECT todo.changes_since('1:1:')::text", None),
    ("writ /todo list all", "SELECT todo.todo_writ('/todo list all')", "text"),
    ("open block", f"SELECT todo.todo_open_block('{CONV}')", "text"),
    ("open preamble", f"SELECT todo.todo_open_preamble('{CONV}')", "text"),
]


@pytest.mark.parametrize("name,sql,says", READS, ids=[r[0] for r in READS])
def test_read_is_bounded(big_cluster, name, sql, says):
    before = postmaster_pid(big_cluster)
    notices = []
    with psycopg.connect(dbname=DB, user="big_agent", autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("SELECT todo.tools()")  # the library loaded
        base = vm_hwm_mb(conn)
        with conn.transaction(force_rollback=True):
            conn.execute("SELECT todo.set_context('big', %s, 'agent-1')", (CONV,))
            started = time.monotonic()
            out = conn.execute(sql).fetchone()[0]
            took = time.monotonic() - started
        peak = vm_hwm_mb(conn)
    grown = peak - base
    print(f"  {name}: {len(out.encode()) / 1024:.0f} KiB in {took:.2f} s; backend peak {peak:.1f} MB, "
          f"{grown:.1f} MB over the backend after loading the library")
    check(f"{name}: the backend grows by at most {BOUND_MB} MB", grown <= BOUND_MB, f"{grown:.1f} MB")
    check(f"{name}: no backend aborted (the postmaster is the same)", postmaster_pid(big_cluster) == before)
    if name.startswith("changes_since"):
        check(f"{name}: the list is in the feed, cut", f'"conversation_id": "{CONV}"' in out and out.count('"id"') < 2000,
              out[:300])
    if says == "notice":
        check(f"{name}: a NOTICE says how many todos it left out",
              any("more todos not shown" in n for n in notices), notices)
    elif says == "text":
        check(f"{name}: the text says how many todos it left out", "more todos not shown" in out, out[-400:])


def test_whole_list_write_of_a_huge_list_keeps_what_no_read_shows(big_cluster):
    """A whole-list replace of a list no read shows whole replaces only the todos a read of it
    shows (docs/tools.md, "Long lists"): the todos past the read's limits, which its writer
    never saw, stay, and the answer says how many. Rolled back: the list stays for the rest."""
    with psycopg.connect(dbname=DB, user="postgres") as conn:
        with conn.transaction(force_rollback=True):
            count = "SELECT count(*) FROM todo.todos WHERE tenant_id = 'big' AND conversation_id = %s"
            before = conn.execute(count, (CONV,)).fetchone()[0]
            conn.execute("SET LOCAL ROLE big_agent")
            conn.execute("SELECT todo.set_context('big', %s, 'agent-1')", (CONV,))
            shown = conn.execute(
                "SELECT jsonb_array_length(todo.call('todoread', '{}')->'metadata'->'todos')").fetchone()[0]
            out = conn.execute("""SELECT todo.call_mcp('todowrite', '{"todos": [{"content": "only this",
                                  "status": "pending", "priority": "high", "id": "1"}]}')""").fetchone()[0]
            conn.execute("RESET ROLE")
            after = conn.execute(count, (CONV,)).fetchone()[0]
            subject = conn.execute("SELECT subject FROM todo.todos WHERE tenant_id = 'big' AND id = 1").fetchone()[0]
    check("todowrite of the huge list: a read shows a few todos", 1 < shown < 1000, shown)
    check("todowrite of the huge list: the answer says how many it kept",
          out.get("_meta", {}).get("pg_todos/kept") == before - shown
          and "more todos as they are" in out["content"][0]["text"], str(out)[-600:])
    check("todowrite of the huge list: only the todos a read showed changed or deleted",
          after == before - (shown - 1) and subject == "only this", (before, shown, after, subject))


def serve_hwm_mb(proc):
    return pg.peak_mb(proc.pid)


def test_mcp_over_http_holds_a_bounded_answer(big_cluster, serve):
    """`pg_todos serve`'s /mcp: three TaskList calls at once on the huge list. Before, serve
    held 682 MB per call on 10,000 todos (2.54 GB for three at once). Now the database hands
    it one bounded answer: serve's peak grows by at most BOUND_MB over its peak after one
    warm-up call, and the text says how many todos it left out."""
    import concurrent.futures

    import web
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as conn:
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent_login') "
                     "THEN CREATE ROLE agent_login LOGIN; END IF; END $$")
        conn.execute("SELECT todo.grant_usage('agent_login')")
    _, tok = web.token(DB, "big", "fleet")
    srv = serve(DB)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "TaskList", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream"}

    def one():
        started = time.monotonic()
        status, _, body, raw = srv.request("POST", f"/mcp?list={CONV}&tools=claude-tasks", call, tok=tok,
                                           headers=headers, timeout=120)
        return status, body, len(raw), time.monotonic() - started

    status, body, size, took = one()
    check("/mcp TaskList on the huge list: 200 with a result", status == 200 and "result" in (body or {}),
          (status, str(body)[:300]))
    text = body["result"]["content"][0]["text"] if status == 200 else ""
    check("/mcp TaskList: the text says how many todos it left out", "more todos not shown" in text, text[-300:])
    warm = serve_hwm_mb(srv.proc)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: one(), range(3)))
    peak = serve_hwm_mb(srv.proc)
    print(f"  /mcp TaskList: {size / 1024:.0f} KiB in {took:.2f} s; serve's peak {warm:.1f} MB after one call, "
          f"{peak:.1f} MB after three at once ({', '.join(f'{r[3]:.2f} s' for r in results)})")
    check("/mcp TaskList, three at once: all 200", all(r[0] == 200 for r in results), [r[0] for r in results])
    check(f"/mcp TaskList, three at once: serve grows by at most {BOUND_MB} MB", peak - warm <= BOUND_MB,
          f"{warm:.1f} -> {peak:.1f} MB")
    check(f"/mcp TaskList: serve's whole peak within {BOUND_MB} MB", peak <= BOUND_MB, f"{peak:.1f} MB")
