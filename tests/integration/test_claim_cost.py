"""claim cost: a claim and todo.ready() cost the same on a list of 1,000 ready todos and of
50,000, and a lease renewal is a HOT update. Measured in buffers, not in time: the blocks of
todo.todos and its indexes one call reads (pg_statio_user_tables / pg_statio_user_indexes,
flushed with pg_stat_force_next_flush()).

- Two lists of one tenant, `small` (1,000 ready todos) and `large` (50,000), both beside the
  tenant-wide pool (500 todos): the blocks read by one claim (and one todo.ready(10)) on the
  large list are at most twice those on the small one (0.9.1 read every ready todo of the
  list: about 50 times as many).
- 40 heartbeats of a claim: at least 90% of their updates of todo.todos are HOT
  (pg_stat_user_tables.n_tup_hot_upd), and updated_at does not move.

Sizes: PGTODOS_CLAIM_COST=SMALLxLARGE (1000x50000)."""
import os

from checks import check

SMALL, LARGE = map(int, os.environ.get("PGTODOS_CLAIM_COST", "1000x50000").split("x"))

BLOCKS = """
SELECT (SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0)
          FROM pg_statio_user_tables WHERE relid = 'todo.todos'::regclass)
     + (SELECT sum(coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0))
          FROM pg_statio_user_indexes WHERE relid = 'todo.todos'::regclass)
"""


def blocks(c):
    c.execute("SELECT pg_stat_force_next_flush()")
    return int(c.execute(BLOCKS).fetchone()[0])


def cost(c, sql, conversation):
    """Blocks of todo.todos and its indexes read by `sql` run acting for a worker on `conversation`."""
    before = blocks(c)
    with c.transaction():
        c.execute("SELECT todo.set_context('acme', %s, 'worker')", (conversation,))
        c.execute(sql).fetchall()
    return blocks(c) - before


def test_claims_and_ready_do_not_grow_with_the_list(cluster):
    db = cluster.database("claim_cost", tenants=["acme"])
    cluster.psql(f"""
        BEGIN;
        SELECT todo.set_context('acme');
        INSERT INTO todo.todos (subject, conversation_id) SELECT 'small ' || g, 'small' FROM generate_series(1, {SMALL}) g;
        INSERT INTO todo.todos (subject, conversation_id) SELECT 'large ' || g, 'large' FROM generate_series(1, {LARGE}) g;
        INSERT INTO todo.todos (subject, conversation_id, priority)
            SELECT 'pool ' || g, NULL, 'low' FROM generate_series(1, 500) g;
        COMMIT;
        VACUUM ANALYZE todo.todos;
        """, db=db)
    with cluster.connect(db, user="agent_login") as c:
        # warm: the plans are made, the pages cached
        for conversation in ("small", "large"):
            cost(c, "SELECT * FROM todo.claim()", conversation)
            cost(c, "SELECT * FROM todo.ready(10)", conversation)
        small = [cost(c, "SELECT * FROM todo.claim()", "small") for _ in range(5)]
        large = [cost(c, "SELECT * FROM todo.claim()", "large") for _ in range(5)]
        ready_small = cost(c, "SELECT * FROM todo.ready(10)", "small")
        ready_large = cost(c, "SELECT * FROM todo.ready(10)", "large")
        with c.transaction():
            c.execute("SELECT todo.set_context('acme')")
            claimed = c.execute("SELECT count(*) FROM todo.todos WHERE status = 'in_progress'").fetchone()[0]
    check(f"claims took a todo each (12 claims: {claimed} in progress)", claimed == 12, str(claimed))
    check(f"a claim reads as many blocks on {LARGE:,} ready todos as on {SMALL:,} (at most 2x): "
          f"{max(large)} against {max(small)}", max(large) <= 2 * max(small), f"small {small} large {large}")
    check(f"todo.ready(10) reads as many blocks on {LARGE:,} ready todos as on {SMALL:,} (at most 2x): "
          f"{ready_large} against {ready_small}", ready_large <= 2 * ready_small, f"{ready_small} {ready_large}")


def test_heartbeats_are_hot_updates(cluster):
    db = cluster.database("hot_heartbeats", tenants=["acme"])
    with cluster.connect(db, user="agent_login") as c:
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', 'work', 'worker')")
            c.execute("SELECT todo.todo_writ(%s)", ("\n".join(f"/todo add job {i}" for i in range(50)),))
            todo_id, fence = c.execute("SELECT id, fence FROM todo.claim(NULL, 300)").fetchone()
            updated = c.execute("SELECT updated_at FROM todo.todos WHERE id = %s", (todo_id,)).fetchone()[0]
        c.execute("SELECT pg_stat_force_next_flush()")
        stats = "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'todo.todos'::regclass"
        upd0, hot0 = c.execute(stats).fetchone()
        for _ in range(40):
            with c.transaction():
                c.execute("SELECT todo.set_context('acme', 'work', 'worker')")
                c.execute("SELECT todo.heartbeat(%s, %s, 300)", (todo_id, fence))
        c.execute("SELECT pg_stat_force_next_flush()")
        upd1, hot1 = c.execute(stats).fetchone()
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', 'work', 'worker')")
            after = c.execute("SELECT updated_at FROM todo.todos WHERE id = %s", (todo_id,)).fetchone()[0]
    updates, hot = upd1 - upd0, hot1 - hot0
    check(f"40 heartbeats: {updates} updates of todo.todos, {hot} of them HOT (at least 90%)",
          updates >= 40 and hot >= 0.9 * updates, f"{updates} {hot}")
    check("a heartbeat keeps updated_at (it is not a change of the todo)", after == updated, f"{updated} {after}")
