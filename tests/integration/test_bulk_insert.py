"""bulk insert: one statement adding many rows of a tenant updates its id ranges a few dozen
times, not once per row. Each update of a row this transaction updated before adds to a chain
of row versions that every later update walks, so once per row made a bulk insert quadratic
(0.9.1: 40,000 rows 12.9 s, 500,000 more than 8 minutes). Counted in updates of
todo.id_ranges (pg_stat_user_tables.n_tup_upd), not in time.

- 20,000 rows in one INSERT … SELECT as the app role: at most 200 updates of todo.id_ranges
  (the first 64 ids one at a time, then 2, 4, … up to 1,024 at a time, and the refills);
- every id unique, every row's id within what the counter handed out, todo.verify() clean;
- the ids a rolled-back savepoint took ahead are not given again (the next rows get new ids);
- a transaction that adds 3 rows one statement at a time gets 3 consecutive ids (no gap).


Size: PGTODOS_BULK_ROWS (20000)."""
import os

import psycopg

from checks import check

ROWS = int(os.environ.get("PGTODOS_BULK_ROWS", 20000))
UPDATES = "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = 'todo.id_ranges'::regclass"


def test_a_bulk_insert_takes_ids_in_growing_runs(cluster):
    db = cluster.database("bulk_insert", tenants=["acme", "globex"])
    with cluster.connect(db) as admin, cluster.connect(db, user="agent_login") as c:
        admin.execute("SELECT pg_stat_force_next_flush()")
        before = admin.execute(UPDATES).fetchone()[0]
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', 'bulk')")
            c.execute("INSERT INTO todo.todos (subject) SELECT 'bulk ' || g FROM generate_series(1, %s) g", (ROWS,))
        c.execute("SELECT pg_stat_force_next_flush()")
        admin.execute("SELECT pg_stat_force_next_flush()")
        updates = admin.execute(UPDATES).fetchone()[0] - before
        check(f"{ROWS:,} rows in one statement: {updates} updates of todo.id_ranges (at most 200)",
              0 < updates <= 200, str(updates))
        with c.transaction():
            c.execute("SELECT todo.set_context('acme')")
            n, distinct, top = c.execute("SELECT count(*), count(DISTINCT id), max(id) FROM todo.todos").fetchone()
            last = c.execute("SELECT last_id FROM todo.counters").fetchone()[0]
            problems = c.execute("SELECT count(*) FROM todo.verify()").fetchone()[0]
        check("every id unique and handed out by the counter; todo.verify() finds nothing",
              n == distinct == ROWS and top <= last and problems == 0, (n, distinct, top, last, problems))

        # a savepoint that takes ids ahead and rolls back: those ids are not given again
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', 'savepoint')")
            for i in range(70):
                c.execute("INSERT INTO todo.todos (subject) VALUES (%s)", (f"kept {i}",))
            try:
                with c.transaction():
                    c.execute("INSERT INTO todo.todos (subject) SELECT 'gone ' || g FROM generate_series(1, 50) g")
                    raise psycopg.Rollback()
            except psycopg.Rollback:
                pass
            c.execute("INSERT INTO todo.todos (subject) SELECT 'after ' || g FROM generate_series(1, 50) g")
        with c.transaction():
            c.execute("SELECT todo.set_context('acme')")
            n, distinct = c.execute("SELECT count(*), count(DISTINCT id) FROM todo.todos").fetchone()
            problems = c.execute("SELECT count(*) FROM todo.verify()").fetchone()[0]
        check("after a rolled-back savepoint that took ids ahead: every id unique, todo.verify() clean",
              n == distinct == ROWS + 120 and problems == 0, (n, distinct, problems))

        # a few rows, one statement each (a tenant's first): consecutive ids
        with c.transaction():
            c.execute("SELECT todo.set_context('globex', 'few')")
            ids = [c.execute("INSERT INTO todo.todos (subject) VALUES (%s) RETURNING id", (f"few {i}",)).fetchone()[0]
                   for i in range(3)]
        check("three rows, one statement each, get consecutive ids", ids == [ids[0], ids[0] + 1, ids[0] + 2], ids)
