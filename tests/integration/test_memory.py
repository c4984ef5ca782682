#!/usr/bin/env python3
"""memory: the inputs that made backends use hundreds of megabytes before the input limits
(docs/operations.md, "Limits") are refused or cut, and no backend's peak memory passes
BOUND_MB. Before the limits, REST took a 50 MB subject plus a 50 MB description and
TaskCreate 20 MB; a 100 KB subject and 2,000 `/todo list` lines built 200 MB of writ output;
four 1 MB todos and an 11 KB message of `/todo list` lines aborted a backend under a 3 GiB
memory limit, and PostgreSQL restarted every database of the server.

Each check runs in a fresh backend, as the plain role agent_login: it sends one input,
checks the answer (refused, or cut at todo.max_output_size), and reads the backend's peak
resident memory, VmHWM of /proc/<pg_backend_pid()>/status, after it. The cluster runs with
shared_buffers = 16MB (a cluster of its own), so the peak is mostly the backend's own memory.
  - An input that is small on the wire (the writ's messages of `/todo list` lines over four
    todos of 1 MB each, stored under a raised limit as a database from before the limits may
    hold them; numbers of 131,072 digits that print 1.3 GB): the peak stays under BOUND_MB.
  - An input of megabytes (fields of 8 MB, TaskCreate's 20 MB of arguments, a 20 MB
    message): PostgreSQL holds a parameter whole, several times over, before any function
    sees it, whatever the limits. The peak stays within OVERHEAD_MB of a backend that gets
    the same parameter without pg_todos (the same row into a table with no trigger, the
    same text to a function that refuses it at once): pg_todos refuses it without copying
    it.
One group: bin/test-integration test_memory.py::test_writ_output_is_cut
"""
import psycopg
import pytest
from psycopg.types.json import Jsonb

import pg
from checks import check

DB = "memory"
BOUND_MB = 100
OVERHEAD_MB = 10
MB = 1024 * 1024
OUTPUT_LIMIT = 1024 * 1024  # todo.max_output_size's default


def vm_hwm_mb(conn):
    """The backend's peak resident memory so far, in MB."""
    return pg.backend_peak_mb(conn)


def peak_of(conversation, run, user="agent_login", before_load=None):
    """Runs `run(conn)` in a fresh backend, in a transaction with the context set that is
    rolled back: (what `run` returned or the error it raised, the backend's peak MB, its
    peak after loading the library). `before_load` runs first, before the library loads."""
    with psycopg.connect(dbname=DB, user=user, autocommit=True) as conn:
        if before_load:
            before_load(conn)
        conn.execute("SELECT todo.set_context('mem', %s, 'agent-1')", (conversation,))
        base = vm_hwm_mb(conn)
        try:
            with conn.transaction(force_rollback=True):
                conn.execute("SELECT todo.set_context('mem', %s, 'agent-1')", (conversation,))
                result = run(conn)
        except psycopg.Error as e:
            result = e
        return result, vm_hwm_mb(conn), base


def measured(name, conversation, run, user="agent_login", before_load=None, baseline=None):
    """Checks one input (see `peak_of`) and returns what `run` returned. Its backend's peak
    must stay under BOUND_MB; for an input that PostgreSQL itself must hold whole before any
    function sees it (a parameter of megabytes), `baseline(conn)` receives the same
    parameter without pg_todos (a table with no trigger, a function that refuses it at
    once), and the peak must stay within OVERHEAD_MB of that."""
    result, peak, base = peak_of(conversation, run, user, before_load)
    if baseline is None:
        print(f"  {name}: backend peak {peak:.1f} MB (after loading the library: {base:.1f} MB)")
        check(f"{name}: backend peak under {BOUND_MB} MB", peak < BOUND_MB, f"{peak:.1f} MB")
    else:
        _, floor, _ = peak_of(conversation, baseline, user)
        print(f"  {name}: backend peak {peak:.1f} MB; the same input without pg_todos: {floor:.1f} MB")
        check(f"{name}: backend peak within {OVERHEAD_MB} MB of the same input without pg_todos",
              peak <= floor + OVERHEAD_MB, f"{peak:.1f} MB vs {floor:.1f} MB")
    return result


def one(conn, sql, params=()):
    return conn.execute(sql, params).fetchone()


def refused_22001(result):
    return isinstance(result, psycopg.Error) and result.sqlstate == "22001"


def plain_insert(conn, subject, description):
    """The same row into a table with no trigger: what PostgreSQL spends on it anyway."""
    conn.execute("CREATE TEMP TABLE plain (subject text, description text) ON COMMIT DROP")
    return one(conn, "INSERT INTO plain VALUES (%s, %s) RETURNING 1", (subject, description))


def refused_notify(conn, text):
    """The same text to a volatile function that refuses it at once (a payload over 8000
    bytes): what PostgreSQL spends passing it to any function."""
    try:
        return conn.execute("SELECT pg_notify('memory', %s)", (text,)).fetchone()
    except psycopg.Error as e:
        return e


def count_todos():
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as conn:
        return one(conn, "SELECT count(*) FROM todo.todos WHERE tenant_id = 'mem'")[0]


@pytest.fixture(scope="module", autouse=True)
def memory_cluster(cluster):
    with pg.own_cluster("memory", conf=["shared_buffers = '16MB'"]) as c:
        c.database(DB)
        setup()
        yield c


def setup():
    """Four todos of 1 MB each in conversation big, stored under a raised limit (as rows
    from before the limits)."""
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as conn:
        conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES ('mem') ON CONFLICT DO NOTHING")
        with conn.transaction():
            conn.execute("SELECT todo.set_context('mem', 'big', 'admin')")
            conn.execute("SET LOCAL todo.max_subject_length = 2000000")
            conn.execute("INSERT INTO todo.todos (subject) SELECT g || ' ' || repeat('x', 1024 * 1024) FROM generate_series(1, 4) g")


def test_fields_of_megabytes_are_refused_without_copies():
    big = "s" * (8 * MB)
    before = count_todos()
    body = Jsonb({"subject": big, "description": big})
    r = measured("REST POST, an 8 MB subject and an 8 MB description", "c1",
                 lambda c: one(c, "SELECT todo.rest('POST', '/v1/todos', %s)", (body,))[0],
                 baseline=lambda c: one(c, "SELECT pg_column_size(%s)", (body,)))
    check("REST: a 16 MB body is 413", isinstance(r, dict) and r.get("status") == 413, str(r)[:200])
    r = measured("REST POST, a 600 KB subject", "c1",
                 lambda c: one(c, "SELECT todo.rest('POST', '/v1/todos', %s)", (Jsonb({"subject": "s" * 600_000}),))[0])
    check("REST: a 600 KB subject in a body under the limit is 422", isinstance(r, dict) and r.get("status") == 422, str(r)[:200])
    args = Jsonb({"subject": "x", "description": "d" * (20 * MB)})
    r = measured("TaskCreate through todo.call_mcp, 20 MB of arguments", "c1",
                 lambda c: one(c, "SELECT todo.call_mcp('TaskCreate', %s)", (args,))[0],
                 baseline=lambda c: one(c, "SELECT pg_column_size(%s)", (args,)))
    check("TaskCreate: 20 MB of arguments is too_large", isinstance(r, dict) and r.get("isError") is True
          and r.get("structuredContent", {}).get("error", {}).get("code") == "too_large", str(r)[:200])
    r = measured("plain SQL INSERT of an 8 MB subject", "c1",
                 lambda c: one(c, "INSERT INTO todo.todos (subject, description) VALUES (%s, %s) RETURNING id", (big, big)),
                 baseline=lambda c: plain_insert(c, big, big))
    check("plain SQL: an 8 MB subject is 22001", refused_22001(r), repr(r)[:200])
    r = measured("plain SQL UPDATE to an 8 MB description", "big",
                 lambda c: one(c, "UPDATE todo.todos SET description = %s WHERE conversation_id = 'big' RETURNING id", (big,)),
                 baseline=lambda c: plain_insert(c, "x", big))
    check("plain SQL: an UPDATE to an 8 MB description is 22001", refused_22001(r), repr(r)[:200])
    check("fields: nothing was written", count_todos() == before, f"{before} -> {count_todos()}")


def test_numbers_of_131072_digits_stay_bounded():
    # 10,000 numbers of 131,072 digits: 100 KB of JSON that prints as 1.3 GB
    bomb = "[" + ", ".join(["1e131071"] * 10_000) + "]"
    r = measured("todo.call with 10,000 numbers of 131,072 digits (1.3 GB printed)", "c1",
                 lambda c: one(c, "SELECT todo.call('TaskCreate', jsonb_build_object('subject', 'x', 'description', 'd', 'metadata', jsonb_build_object('n', %s::jsonb)))", (bomb,))[0])
    check("numbers: tool arguments are too_large, measured not printed",
          isinstance(r, dict) and r.get("error", {}).get("code") == "too_large", str(r)[:200])
    r = measured("todo.rest with 10,000 numbers of 131,072 digits", "c1",
                 lambda c: one(c, "SELECT todo.rest('POST', '/v1/todos', jsonb_build_object('subject', 'x', 'n', %s::jsonb))", (bomb,))[0])
    check("numbers: a REST body is 413", isinstance(r, dict) and r.get("status") == 413, str(r)[:200])
    r = measured("plain SQL INSERT of metadata with 10,000 numbers of 131,072 digits", "c1",
                 lambda c: one(c, "INSERT INTO todo.todos (subject, metadata) VALUES ('x', jsonb_build_object('n', %s::jsonb)) RETURNING id", (bomb,)))
    check("numbers: metadata is 22001", refused_22001(r), repr(r)[:200])


def writ_out(c, message):
    return one(c, "SELECT octet_length(w), right(w, 400) FROM todo.todo_writ(%s) w", (message,))


def test_writ_output_is_cut():
    before = count_todos()
    # the 11 KB of /todo list lines: over todo.max_writ_commands, nothing runs
    message = "/todo list\n" * 1000
    r = measured("11 KB of /todo list lines over four 1 MB todos", "big", lambda c: writ_out(c, message))
    check("writ: 1,000 /todo list lines are refused whole",
          isinstance(r, tuple) and r[0] < 300 and "the limit is 200 commands (todo.max_writ_commands)" in r[1], repr(r)[:300])
    # 200 lists (within the command limit) of 4 MB each: cut at 1 MB
    r = measured("200 /todo list lines over four 1 MB todos", "big", lambda c: writ_out(c, "/todo list\n" * 200))
    check("writ: 200 lists of four 1 MB todos stop at todo.max_output_size",
          isinstance(r, tuple) and r[0] <= OUTPUT_LIMIT and "199 more /todo commands did not run" in r[1], repr(r)[:500])
    # the other shape: 2,000 lists (a superuser raised the command limit) of a 100 KB todo
    def two_thousand(c):
        c.execute("SET LOCAL todo.max_writ_commands = 2000")
        c.execute("SET LOCAL todo.max_subject_length = 200000")
        c.execute("INSERT INTO todo.todos (subject) VALUES (repeat('y', 100 * 1024))")
        return writ_out(c, "/todo list\n" * 2000)
    r = measured("2,000 /todo list lines over a 100 KB todo (as a superuser, command limit raised)", "hundred", two_thousand, user="postgres")
    check("writ: 2,000 lists stop at todo.max_output_size",
          isinstance(r, tuple) and r[0] <= OUTPUT_LIMIT and "more /todo commands did not run" in r[1], repr(r)[:500])
    # a message of 20 MB: refused before it is parsed
    message = "/todo add x\n" + "y" * (20 * MB)
    r = measured("a 20 MB writ message", "c1", lambda c: writ_out(c, message),
                 baseline=lambda c: refused_notify(c, message))
    check("writ: a 20 MB message is refused whole",
          isinstance(r, tuple) and "(todo.max_message_size)" in r[1], repr(r)[:300])
    # the open block and the preamble over the big todos: cut at the limit
    r = measured("the open block over four 1 MB todos", "big",
                 lambda c: one(c, "SELECT octet_length(b), right(b, 200) FROM todo.todo_open_preamble('big') b"))
    check("open preamble: cut at todo.max_output_size and closed",
          isinstance(r, tuple) and r[0] <= OUTPUT_LIMIT and r[1].endswith("[END OPEN TODOS]"), repr(r)[:300])
    # a plain role's SET is refused (the library is preloaded, as the test clusters have it),
    # or, before the library loads, dropped: the limit holds
    refused = []

    def agent_sets(conn):
        try:
            conn.execute("SET todo.max_output_size = '1GB'")
        except psycopg.errors.InsufficientPrivilege as e:
            refused.append(e)
    r = measured("200 lists after the agent SET todo.max_output_size = '1GB' before loading", "big",
                 lambda c: writ_out(c, "/todo list\n" * 200), before_load=agent_sets)
    check("writ: the agent's SET of its output limit is refused (42501), with no Rust backtrace",
          len(refused) == 1 and "panic" not in str(refused[0].diag.message_detail or ""), refused)
    check("writ: an agent cannot raise its own output limit",
          isinstance(r, tuple) and r[0] <= OUTPUT_LIMIT, repr(r)[:300])
    check("writ: nothing was written", count_todos() == before, f"{before} -> {count_todos()}")


