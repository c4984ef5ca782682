"""upgrade: a database created at each released version (every frozen sql/pg_todos--X.sql) and
updated with ALTER EXTENSION pg_todos UPDATE keeps all its data, ends with exactly the objects
of a fresh install of this version (definitions, privileges, comments), works (deep nesting, a
claim and a dependency on old rows), re-grants the roles the old version granted, and passes
the same pg_regress suite as a fresh install (bin/installcheck with PGTODOS_UPGRADE_FROM, one
check per pg_regress test). One version: bin/test-integration test_upgrade.py -k 0.7.0

The update to 0.9.1 repairs the id ranges 0.9.0's refill left colliding (two ranges handing out
the same ids, a range's next ids in use, a range past its counter): it says so in one WARNING
naming the tenants, todo.verify() is clean after it, and the repaired tenant's adds succeed
with new ids; a database without such ranges updates with no warning and no range changed.
Those two: bin/test-integration test_upgrade.py -k 0_9_1

The update to 1.1.0 repairs the rows 1.0.0 let an INSERT store under the id of a deleted todo
(no insert event of their own, every change refused with 23505): each gets a fresh id and its
insert event, what referred to it follows it, one WARNING names them, todo.verify() is clean
and the row can be changed. bin/test-integration test_upgrade.py -k 1_1_0
"""
import difflib
import os
import re
import subprocess
import time

import psycopg
import pytest

import pg
from checks import check

RELEASED = pg.released()
CURRENT = pg.version()

# every object of the extension's schemas (todo, and todo_internal, its private one), with its
# definition, its privileges and its comment
OBJECTS = """
SELECT 'schema ' || n.nspname || ' ' || coalesce(n.nspacl::text, '') || ' ' || coalesce(obj_description(n.oid, 'pg_namespace'), '')
  FROM pg_namespace n WHERE n.nspname IN ('todo', 'todo_internal')
UNION ALL
SELECT 'function ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '')
       || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
  FROM pg_proc p WHERE p.pronamespace IN ('todo'::regnamespace, 'todo_internal'::regnamespace)
UNION ALL
SELECT 'relation ' || c.oid::regclass || ' ' || c.relkind::text || ' ' || c.relrowsecurity::text || c.relforcerowsecurity::text
       || ' ' || coalesce(c.relacl::text, '') || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '')
  FROM pg_class c WHERE c.relnamespace = 'todo'::regnamespace
UNION ALL
SELECT 'column ' || a.attrelid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
       || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(col_description(a.attrelid, a.attnum), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relnamespace = 'todo'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'todo'::regnamespace
UNION ALL
SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
 WHERE c.relnamespace = 'todo'::regnamespace
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
   AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'todo'::regnamespace)
UNION ALL
SELECT 'policy ' || schemaname || '.' || tablename || ' ' || policyname || ' ' || cmd || ' ' || roles::text || ' '
       || coalesce(qual, '') || ' ' || coalesce(with_check, '')
  FROM pg_policies WHERE schemaname = 'todo'
UNION ALL
SELECT 'member ' || pg_describe_object(d.classid, d.objid, 0) FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_todos')
UNION ALL
SELECT 'config ' || unnest(extconfig)::regclass FROM pg_extension WHERE extname = 'pg_todos'
ORDER BY 1
"""

# data written at the old version, through its tables and row triggers. (This library's
# surfaces expect the current schema: a database is updated with ALTER EXTENSION pg_todos
# UPDATE right after the library is installed.)
SEED = """
INSERT INTO todo.tenants VALUES ('acme', 'Acme'), ('globex', 'Globex');
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1');
INSERT INTO todo.todos (tenant_id, conversation_id, subject) VALUES ('acme', 'conv-1', 'review the deploy');
INSERT INTO todo.todos (tenant_id, conversation_id, subject, description)
VALUES ('acme', 'conv-1', 'write the post-mortem', 'body');
UPDATE todo.todos SET status = 'in_progress' WHERE tenant_id = 'acme' AND id = 1;
INSERT INTO todo.todos (tenant_id, conversation_id, turn_id, subject) VALUES ('acme', 'conv-1', 'turn-1', 'plan step');
UPDATE todo.todos SET status = 'completed', active_form = 'Reviewing' WHERE tenant_id = 'acme' AND id = 1;
INSERT INTO todo.todos (tenant_id, conversation_id, subject) VALUES ('acme', NULL, 'pool item');
SELECT todo.set_context('globex', 'conv-9', 'bot');
INSERT INTO todo.todos (tenant_id, conversation_id, subject, description) VALUES ('globex', 'conv-9', 'globex task', '');
COMMIT;
"""

# the rows as the old version knew them (columns added since are compared by the objects check)
SNAPSHOT = """
SELECT 'tenants', md5(string_agg(t::text, '|' ORDER BY tenant_id)) FROM todo.tenants t;
SELECT 'counters', md5(string_agg(c::text, '|' ORDER BY tenant_id)) FROM todo.counters c;
SELECT 'todos', count(*), md5(string_agg(row(tenant_id, id, conversation_id, turn_id, agent_id, subject, description,
       active_form, status, priority, position, completion_criteria, agent_type, outcome, version, created_at,
       updated_at, started_at, completed_at)::text, '|' ORDER BY tenant_id, id)) FROM todo.todos t;
SELECT 'events', count(*), md5(string_agg(row(tenant_id, todo_id, version, action, conversation_id, agent_id, turn_id,
       old_status, new_status, changes, event_at)::text, '|' ORDER BY tenant_id, todo_id, version)) FROM todo.events e;
"""

DEEP = """
BEGIN;
SELECT todo.set_context('acme', 'conv-1') \\g /dev/null
SELECT todo.call('todowrite', ('{"todos": ' || repeat('[', 300) || repeat(']', 300) || '}')::jsonb)->'error'->>'code';
COMMIT;
"""

# the old rows take part in the new features: claim one, block another on it
COORDINATE = r"""
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent-x') \g /dev/null
SELECT todo.todo_writ(format(E'/todo block %s on %s\n/todo claim %s\n/todo list', pool, pm, pm))
  FROM (SELECT max(id) FILTER (WHERE subject = 'pool item') AS pool,
               max(id) FILTER (WHERE subject = 'write the post-mortem') AS pm
          FROM todo.todos WHERE tenant_id = 'acme') ids;
ROLLBACK;
"""


@pytest.fixture(scope="module")
def fresh_objects(cluster):
    db = cluster.database("upgrade_fresh", role=None)
    return cluster.psql(OBJECTS, db=db)


@pytest.mark.parametrize("version", RELEASED)
def test_an_updated_database_keeps_its_data_and_equals_a_fresh_install(cluster, fresh_objects, version):
    db = "from_" + version.replace(".", "_")
    cluster.database(db, extension=False)
    cluster.psql(f"CREATE EXTENSION pg_todos VERSION '{version}'", db=db)
    cluster.psql(SEED, db=db)
    before = cluster.psql(SNAPSHOT, db=db)
    cluster.psql("ALTER EXTENSION pg_todos UPDATE", db=db)
    after = cluster.psql(SNAPSHOT, db=db)
    reached = cluster.psql("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'", db=db).strip()
    check(f"{version}: the update reaches {CURRENT}", reached == CURRENT, reached)
    check(f"{version}: every tenant, counter, todo and event survives the update", before == after,
          f"\n{before}\n!=\n{after}")
    check(f"{version}: the data was there to survive", "\ntodos|5|" in "\n" + after, after)
    broken = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check(f"{version}: the invariants hold after the update", not broken.strip(), broken)
    objects = cluster.psql(OBJECTS, db=db)
    check(f"{version}: an upgraded database has exactly the objects of a fresh install", objects == fresh_objects,
          "\n" + "\n".join(difflib.unified_diff(fresh_objects.splitlines(), objects.splitlines(), "fresh", "updated",
                                                lineterm="")))
    deep = cluster.psql(DEEP, db=db).strip()
    check(f"{version}: the upgraded database works: deep nesting is an error object", deep == "invalid_arguments", deep)
    coord = cluster.psql(COORDINATE, db=db)
    check(f"{version}: an old todo can be claimed after the update",
          "OK: claimed #" in coord and "— write the post-mortem" in coord, coord)
    check(f"{version}: an old todo can wait for another after the update", "pool item (blocked by #" in coord, coord)


# The C symbols the SQL of earlier versions names for functions whose Rust name (and so their
# symbol) changed since (surfaces::earlier_symbol): until its ALTER EXTENSION UPDATE, a
# database calls them. Each is given the signature of today's function, in schema earlier, and
# must answer as it does.
EARLIER_SYMBOLS = {"claim": "sql_claim_wrapper", "heartbeat": "sql_heartbeat_wrapper", "release": "sql_release_wrapper",
                   "finish": "sql_finish_wrapper", "block": "sql_block_wrapper", "unblock": "sql_unblock_wrapper",
                   "ready": "sql_ready_wrapper", "call": "call_jsonb_wrapper", "call_mcp": "call_mcp_jsonb_wrapper",
                   "rest": "rest_jsonb_wrapper"}

EARLIER_CALLS = r"""
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent-x') \g /dev/null
INSERT INTO todo.todos (subject) VALUES ('first'), ('second') \g /dev/null
SELECT 'ready', (SELECT array_agg(r ORDER BY r.id) FROM earlier.ready() r) = (SELECT array_agg(r ORDER BY r.id) FROM todo.ready() r);
SELECT 'call', earlier.call('todoread', '{}') = todo.call('todoread', '{}');
SELECT 'call_mcp', earlier.call_mcp('todoread', '{}') = todo.call_mcp('todoread', '{}');
SELECT 'rest', earlier.rest('GET', '/v1/todos/1') = todo.rest('GET', '/v1/todos/1');
SELECT 'block', earlier.block(2, 1), 'unblock', earlier.unblock(2, 1);
SELECT 'claim', c.id, c.subject FROM earlier.claim(1) c;
SELECT 'heartbeat', earlier.heartbeat(1) > now();
SELECT earlier.release(1) \g /dev/null
SELECT 'release', status FROM todo.todos WHERE id = 1;
SELECT earlier.finish(2, outcome => 'done') \g /dev/null
SELECT 'finish', status, outcome FROM todo.todos WHERE id = 2;
ROLLBACK;
"""


def test_the_symbols_of_earlier_versions_answer_as_today(cluster):
    db = cluster.database("earlier_symbols", tenants=["acme"], role=None)
    cluster.psql("CREATE SCHEMA earlier;\n" + "".join(
        f"SELECT replace(replace(pg_get_functiondef('todo.{name}'::regproc), 'FUNCTION todo.{name}(', "
        f"'FUNCTION earlier.{name}('), '{name}_wrapper', '{symbol}') \\gexec\n"
        for name, symbol in EARLIER_SYMBOLS.items()), db=db)
    made = cluster.psql("SELECT p.proname || ' ' || p.prosrc FROM pg_proc p WHERE p.pronamespace = 'earlier'::regnamespace "
                        "ORDER BY 1", db=db).split("\n")
    check("every earlier symbol is found in the library", sorted(made[:-1]) == sorted(
        f"{n} {s}" for n, s in EARLIER_SYMBOLS.items()), made)
    out = cluster.psql(EARLIER_CALLS, db=db)
    want = ["ready|t", "call|t", "call_mcp|t", "rest|t", "block|t|unblock|t", "claim|1|first", "heartbeat|t",
            "release|pending", "finish|completed|done"]
    check("each earlier symbol answers as today's function", out.split("\n")[:-1] == want, out)
    cluster.psql(f'DROP DATABASE "{db}" WITH (FORCE)')


@pytest.mark.parametrize("version", RELEASED)
def test_roles_the_old_version_granted_are_granted_again(cluster, version):
    # in a database of its own: its grants would differ from a fresh install's objects
    db = "roles_from_" + version.replace(".", "_")
    role = "old_app_" + version.replace(".", "_")
    cluster.database(db, extension=False)
    cluster.psql(f"DROP ROLE IF EXISTS {role}")
    cluster.psql(f"CREATE EXTENSION pg_todos VERSION '{version}'; CREATE ROLE {role}; "
                 f"SELECT todo.grant_usage('{role}'); ALTER EXTENSION pg_todos UPDATE;", db=db)
    regranted = cluster.psql(f"""
SELECT (SELECT tenant_id IS NULL AND plain_sql FROM todo.roles WHERE role = '{role}'::regrole),
       has_function_privilege('{role}', 'todo.todo_writ(text)', 'EXECUTE'),
       has_table_privilege('{role}', 'todo.todos', 'UPDATE'),
       has_table_privilege('{role}', 'todo.events', 'INSERT'),
       has_table_privilege('{role}', 'todo.counters', 'UPDATE');""", db=db).strip()
    cluster.psql(f'DROP DATABASE "{db}" WITH (FORCE)')
    cluster.psql(f"DROP ROLE {role}")
    check(f"{version}: a role the old version granted is granted again: an app role, its functions, "
          "no writes of events or counters", regranted == "t|t|t|f|f", regranted)


@pytest.mark.parametrize("version", RELEASED)
def test_an_updated_database_passes_the_regress_suite(version):
    """bin/installcheck on a database created at `version` and updated (its own cluster)."""
    run = subprocess.run([os.path.join(pg.REPO, "bin", "installcheck")], cwd=pg.REPO, capture_output=True, text=True,
                         env={**os.environ, "PGTODOS_UPGRADE_FROM": version, "PGTODOS_INSTALLED": "debug"})
    results = pg.regress_results(run.stdout)
    for name, ok in results:
        check(f"{version}: pg_regress {name}", ok)
    if run.returncode or not results:  # failed before or besides its tests
        check(f"{version}: bin/installcheck ran its tests and exited 0", False, run.stdout[-3000:] + run.stderr)


# Up to 0.9.0 the refill of an emptied id range could give two ranges the same ids; every
# second add of the tenant then failed with 23505. The state it left, written directly at
# 0.9.0: tenant `collide`'s two ranges both hand out 66-96 and ids 65-70 are in use (the next
# ids of either range), tenant `ahead` has a range past its counter, tenant `fine` is sound.
COLLIDING = """
INSERT INTO todo.tenants VALUES ('collide', 'Collide'), ('ahead', 'Ahead'), ('fine', 'Fine'), ('nocounter', 'No counter');
BEGIN;
SELECT todo.set_context('collide', 'conv-1', 'seed');
INSERT INTO todo.todos (tenant_id, conversation_id, id, subject)
SELECT 'collide', 'conv-1', g, 'in use ' || g FROM generate_series(65, 70) g;
SELECT todo.set_context('fine', 'conv-1', 'seed');
INSERT INTO todo.todos (tenant_id, conversation_id, subject) SELECT 'fine', 'conv-1', 'fine ' || g FROM generate_series(1, 5) g;
COMMIT;
UPDATE todo.counters SET last_id = 96 WHERE tenant_id = 'collide';
DELETE FROM todo.id_ranges WHERE tenant_id = 'collide';
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('collide', 1, 66, 96), ('collide', 2, 66, 96);
INSERT INTO todo.counters (tenant_id, last_id) VALUES ('ahead', 10);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('ahead', 1, 5, 40);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('nocounter', 1, 1, 32);
"""

RANGES = "SELECT tenant_id, slot, next_id, last_id FROM todo.id_ranges ORDER BY 1, 2"
COUNTERS = "SELECT tenant_id, last_id FROM todo.counters ORDER BY 1"


class Notice:
    """A notice's fields (psycopg's Diagnostic is valid only inside the handler)."""

    def __init__(self, d):
        self.severity, self.sqlstate = d.severity_nonlocalized, d.sqlstate
        self.message_primary, self.message_detail, self.message_hint = d.message_primary, d.message_detail, d.message_hint


def update_to_0_9_1(cluster, db):
    """ALTER EXTENSION pg_todos UPDATE TO '0.9.1' as a superuser: the notices it raised."""
    notices = []
    with cluster.connect(db) as conn:
        conn.add_notice_handler(lambda d: notices.append(Notice(d)))
        conn.execute("ALTER EXTENSION pg_todos UPDATE TO '0.9.1'")
    return notices


def as_agent(cluster, db):
    cluster.psql("DO $$ BEGIN CREATE ROLE agent_login LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
                 "SELECT todo.grant_usage('agent_login');", db=db)
    return cluster.connect(db, user="agent_login")


@pytest.mark.skipif("0.9.0" not in RELEASED, reason="0.9.0 is not a released version here")
def test_the_update_to_0_9_1_repairs_colliding_id_ranges(cluster):
    db = cluster.database("ranges_from_0_9_0", extension=False)
    cluster.psql("CREATE EXTENSION pg_todos VERSION '0.9.0'", db=db)
    cluster.psql(COLLIDING, db=db)
    before = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("0.9.0's verify sees the collision's next ids in use", "id 66 is still to be handed out by id range 1" in before
          and "id 66 is still to be handed out by id range 2" in before, before)

    notices = update_to_0_9_1(cluster, db)
    repaired = [n for n in notices if "repaired the id ranges" in (n.message_primary or "")]
    said = [f"{n.severity}: {n.message_primary} / {n.message_detail} / {n.message_hint}" for n in notices]
    check("the update raises one WARNING saying what it repaired",
          len(repaired) == 1 and repaired[0].severity == "WARNING", said)
    if repaired:
        w = repaired[0]
        check("the WARNING counts three tenants: one range emptied, one moved past ids in use, a counter moved up, one made",
              w.message_primary == "pg_todos 0.9.1 repaired the id ranges of 3 tenant(s): 1 range(s) that overlapped "
                                   "another emptied, 1 moved past ids in use, 2 counter(s) moved up or made", w.message_primary)
        check("its DETAIL names the tenants repaired, not the sound one",
              w.message_detail == "tenants: ahead, collide, nocounter",
              w.message_detail)
        check("its HINT says the adds work again", "23505" in (w.message_hint or ""), w.message_hint)
    ranges = cluster.psql(RANGES, db=db).split()
    check("collide's first range moved past the ids in use, the second emptied; ahead's range kept",
          "collide|1|71|96" in ranges and "collide|2|97|96" in ranges and "ahead|1|5|40" in ranges, ranges)
    counters = cluster.psql(COUNTERS, db=db).split()
    check("nocounter's counter made past its range", "nocounter|32" in counters, counters)
    check("ahead's counter moved up to its range's last id, collide's kept", "ahead|40" in counters
          and "collide|96" in counters, counters)
    after = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("todo.verify() finds nothing after the update", not after.strip(), after)

    # 50 adds of the repaired tenant, two sessions at once (so both ranges are used: the
    # second session refills the emptied one), all succeed with ids never seen
    ids, errors = [], []
    with as_agent(cluster, db) as a, as_agent(cluster, db) as b:
        for i in range(25):
            with a.transaction(), b.transaction():
                for conn, who in ((a, "a"), (b, "b")):
                    conn.execute("SELECT todo.set_context('collide', 'conv-1', %s)", (who,))
                    out = conn.execute("SELECT todo.todo_writ(%s)", (f"/todo add after {who} {i}",)).fetchone()[0]
                    found = re.findall(r"^OK: added #(\d+) ", out, re.M)
                    ids += [int(x) for x in found]
                    errors += [line for line in out.splitlines() if line.startswith("ERR:")]
        with a.transaction():
            a.execute("SELECT todo.set_context('ahead', 'conv-1', 'a')")
            out = a.execute("SELECT todo.todo_writ(%s)", ("/todo add one of ahead\n/todo add two of ahead",)).fetchone()[0]
        ahead = [int(x) for x in re.findall(r"^OK: added #(\d+) ", out, re.M)]
    check("50 adds of the repaired tenant all succeed", len(ids) == 50 and not errors, (len(ids), errors[:3]))
    refilled = cluster.psql("SELECT last_id > 96 FROM todo.id_ranges WHERE tenant_id = 'collide' AND slot = 2", db=db)
    check("the second session refilled the emptied range", refilled.strip() == "t", cluster.psql(RANGES, db=db))
    check("the tenant whose range was past its counter adds too", ahead == [5, 6], out)
    check("their ids are distinct and none is an id in use before", len(set(ids)) == 50
          and not set(ids) & set(range(65, 71)), sorted(ids))
    stored = cluster.psql("SELECT count(*), count(DISTINCT id) FROM todo.todos WHERE tenant_id = 'collide'", db=db).strip()
    check("collide holds its 6 old todos and the 50 new ones", stored == "56|56", stored)
    after = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("todo.verify() finds nothing after the adds", not after.strip(), after)
    cluster.psql(f'DROP DATABASE "{db}" WITH (FORCE)')


@pytest.mark.skipif("0.9.0" not in RELEASED, reason="0.9.0 is not a released version here")
def test_the_update_to_0_9_1_of_sound_id_ranges_repairs_nothing(cluster):
    db = cluster.database("sound_ranges_from_0_9_0", extension=False)
    cluster.psql("CREATE EXTENSION pg_todos VERSION '0.9.0'", db=db)
    cluster.psql(SEED, db=db)
    # many tenants' ranges, as the layout that broke the refill had, all sound
    cluster.psql("""
INSERT INTO todo.tenants (tenant_id) SELECT 'filler-' || g FROM generate_series(1, 2000) g;
INSERT INTO todo.counters (tenant_id, last_id) SELECT 'filler-' || g, 64 FROM generate_series(1, 2000) g;
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id)
SELECT 'filler-' || g, s, 10 + 32 * (s - 1), 32 * s FROM generate_series(1, 2000) g, generate_series(1, 2) s;
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('acme', 2, 33, 32), ('acme', 3, 33, 32);
ANALYZE todo.id_ranges;
""", db=db)
    ranges, counters = cluster.psql(RANGES, db=db), cluster.psql(COUNTERS, db=db)
    started = time.time()
    notices = update_to_0_9_1(cluster, db)
    took = time.time() - started
    said = [f"{n.severity}: {n.message_primary}" for n in notices]
    check("an update with no colliding ranges raises no repair warning",
          not any("repaired" in (n.message_primary or "") for n in notices), said)
    check("nor any WARNING at all", not any(n.severity == "WARNING" for n in notices), said)
    check("it changes no range and no counter", cluster.psql(RANGES, db=db) == ranges
          and cluster.psql(COUNTERS, db=db) == counters)
    after = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("todo.verify() finds nothing after the update", not after.strip(), after[:2000])
    print(f"the update of 2,003 tenants' ranges took {took:.1f} s")
    cluster.psql(f'DROP DATABASE "{db}" WITH (FORCE)')


# What 1.0.0 let an app's plain INSERT do, written directly (the library installed now refuses
# it): tenant `stuck` deleted todo #2, then stored a row with id 2, which 1.0.0 gave no insert
# event (the deleted todo's was there). A subtask of it, a wait on it and a checklist item of it
# were added after. Tenant `sound` has a deleted todo and nothing stuck.
STUCK = """
INSERT INTO todo.tenants VALUES ('stuck', 'Stuck'), ('sound', 'Sound');
BEGIN;
SELECT todo.set_context('stuck', 'conv-1', 'seed');
INSERT INTO todo.todos (subject) VALUES ('first'), ('second'), ('third');
DELETE FROM todo.todos WHERE id = 2;
SELECT todo.set_context('sound', 'conv-1', 'seed');
INSERT INTO todo.todos (subject) VALUES ('one'), ('two');
DELETE FROM todo.todos WHERE id = 1;
COMMIT;
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO todo.todos (tenant_id, id, conversation_id, subject, position) VALUES ('stuck', 2, 'conv-1', 'second again', 2);
COMMIT;
BEGIN;
SELECT todo.set_context('stuck', 'conv-1', 'seed');
INSERT INTO todo.todos (subject, parent_id) VALUES ('child of the stuck one', 2);
INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('stuck', 3, 2);
INSERT INTO todo.checklist_items (tenant_id, todo_id, kind, position, text) VALUES ('stuck', 2, 'acceptance', 1, 'done right');
COMMIT;
"""


@pytest.mark.skipif("1.0.0" not in RELEASED, reason="1.0.0 is not a released version here")
def test_the_update_to_1_1_0_repairs_rows_given_a_deleted_todos_id(cluster):
    db = cluster.database("stuck_from_1_0_0", extension=False)
    cluster.psql("CREATE EXTENSION pg_todos VERSION '1.0.0'", db=db)
    cluster.psql(STUCK, db=db)
    before = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("1.0.0's verify reports the stuck row", "stuck|2|" in before, before)
    with as_agent(cluster, db) as a:
        try:
            with a.transaction():
                a.execute("SET LOCAL todo.tenant = 'stuck'")
                a.execute("UPDATE todo.todos SET status = 'in_progress' WHERE subject = 'second again'")
            refused = None
        except psycopg.Error as e:
            refused = e.sqlstate
    check("before the update the stuck row cannot be changed (23505)", refused == "23505", refused)
    counters = cluster.psql("SELECT last_id FROM todo.counters WHERE tenant_id = 'stuck'", db=db).strip()

    notices = []
    with cluster.connect(db) as conn:
        conn.add_notice_handler(lambda d: notices.append(Notice(d)))
        conn.execute("ALTER EXTENSION pg_todos UPDATE TO '1.1.0'")
    warned = [n for n in notices if n.severity == "WARNING" and "new id" in (n.message_primary or "")]
    said = [f"{n.severity}: {n.message_primary} / {n.message_detail}" for n in notices]
    new_id = cluster.psql("SELECT id FROM todo.todos WHERE tenant_id = 'stuck' AND subject = 'second again'",
                          db=db).strip()
    check("the stuck row got a fresh id, past the counter as it was", new_id.isdigit()
          and int(new_id) == int(counters) + 1, (new_id, counters))
    check("one WARNING names the repaired row and its new id", len(warned) == 1
          and warned[0].message_detail == f"stuck: #2 is now #{new_id}", said)
    after = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("todo.verify() finds nothing after the update", not after.strip(), after)
    events = cluster.psql(f"SELECT todo_id, version, action FROM todo.events WHERE tenant_id = 'stuck' "
                          f"AND todo_id IN (2, {new_id or 0}) ORDER BY todo_id, version", db=db).split()
    check("id 2 keeps the deleted todo's history; the new id has its insert event",
          events == ["2|1|insert", "2|2|delete", f"{new_id}|1|insert"], events)
    refs = cluster.psql("SELECT (SELECT parent_id FROM todo.todos WHERE tenant_id = 'stuck' AND subject = "
                        "'child of the stuck one'), (SELECT depends_on FROM todo.dependencies WHERE tenant_id = 'stuck' "
                        "AND todo_id = 3), (SELECT todo_id FROM todo.checklist_items WHERE tenant_id = 'stuck')",
                        db=db).strip()
    check("its subtask, the wait on it and its checklist follow it", refs == f"{new_id}|{new_id}|{new_id}", refs)
    with as_agent(cluster, db) as a:
        with a.transaction():
            a.execute("SET LOCAL todo.tenant = 'stuck'")
            a.execute(f"UPDATE todo.todos SET status = 'in_progress' WHERE id = {new_id}")
            a.execute(f"UPDATE todo.todos SET status = 'completed' WHERE id = {new_id}")
            status = a.execute(f"SELECT status, version FROM todo.todos WHERE id = {new_id}").fetchone()
    check("the repaired row can be changed and completed", status == ("completed", 3), status)
    after = cluster.psql("SELECT * FROM todo.verify()", db=db)
    check("todo.verify() finds nothing after it changed", not after.strip(), after)
    cluster.psql(f'DROP DATABASE "{db}" WITH (FORCE)')
