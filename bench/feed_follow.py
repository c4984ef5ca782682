#!/usr/bin/env python3
"""feed_follow: the cost of one poll of the change feed by a resource subscriber, after one
write to a list of 100 and of 2,000 todos: todo.changes_since(cursor, NULL, 1000) (each changed
list whole, as OpenCode's todos) against todo.changed_lists(cursor) (only which lists
changed), CALLS calls of each (200) timed with clock_timestamp() inside one transaction (no
round trips counted), and the bytes of each answer. Prints bench/results.md's section
"Following the feed".
Usage: bench/feed_follow.py DBNAME TENANT VERSION (libpq environment of the cluster, as a plain
role granted with todo.grant_usage; TENANT registered)
"""
import datetime
import os
import sys

import psycopg

DB, TENANT, VERSION = sys.argv[1:4]
CALLS = int(os.environ.get("CALLS", 200))
SIZES = (100, 2000)

TIMED = """
DO $timed$
DECLARE t0 timestamptz; i int; c text := current_setting('bench.cursor');
BEGIN
    t0 := clock_timestamp();
    FOR i IN 1..%(calls)s LOOP PERFORM todo.changes_since(c, NULL, 1000); END LOOP;
    PERFORM set_config('bench.whole', (extract(epoch FROM clock_timestamp() - t0) * 1e6 / %(calls)s)::text, true);
    t0 := clock_timestamp();
    FOR i IN 1..%(calls)s LOOP PERFORM todo.changed_lists(c); END LOOP;
    PERFORM set_config('bench.lists', (extract(epoch FROM clock_timestamp() - t0) * 1e6 / %(calls)s)::text, true);
END
$timed$"""


def measure(conn, size):
    """(µs per changes_since, µs per changed_lists, bytes of each) after one write to a list
    of `size` todos."""
    conversation = f"list-{size}"
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s, 'loader')", (TENANT, conversation))
        conn.execute("INSERT INTO todo.todos (subject, description) SELECT 'todo number ' || g, repeat('x', 80) "
                     "FROM generate_series(1, %s) g", (size,))
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, NULL, 'follower')", (TENANT,))
        cursor = conn.execute("SELECT todo.changed_lists(NULL)->>'cursor'").fetchone()[0]
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s, 'writer')", (TENANT, conversation))
        conn.execute("SELECT todo.todo_writ('/todo add one more')")
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, NULL, 'follower')", (TENANT,))
        conn.execute("SELECT set_config('bench.cursor', %s, true)", (cursor,))
        whole_bytes, lists_bytes, lists = conn.execute(
            "SELECT length(todo.changes_since(%s, NULL, 1000)::text), length(todo.changed_lists(%s)::text), "
            "todo.changed_lists(%s)->'lists'", (cursor, cursor, cursor)).fetchone()
        assert lists == [conversation], lists
        conn.execute(TIMED % {"calls": CALLS})
        whole = float(conn.execute("SELECT current_setting('bench.whole')").fetchone()[0])
        only = float(conn.execute("SELECT current_setting('bench.lists')").fetchone()[0])
    return whole, only, whole_bytes, lists_bytes


def main():
    with psycopg.connect(dbname=DB) as conn:
        rows = [(size, *measure(conn, size)) for size in SIZES]
    print("## Following the feed: one poll of a resource subscriber\n")
    print(f"`bench/feed_follow.sh` on {datetime.date.today().isoformat()}, pg_todos {VERSION}: after one write to a list, "
          f"what one poll of the change feed costs inside the database ({CALLS} calls of each, one transaction, "
          "release build). A resource subscription or an MCP `subscriptions/listen` polls twice a second.\n")
    print("| the changed list | `changes_since` (each list whole) | bytes | `changed_lists` (ids only) | bytes | ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, whole, only, whole_bytes, lists_bytes in rows:
        print(f"| {size:,} todos | {whole:,.0f} µs | {whole_bytes:,} | {only:,.0f} µs | {lists_bytes:,} | {whole / only:,.0f}× |")


main()
