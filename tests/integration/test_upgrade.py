"""upgrade: a database created at each released version (every frozen sql/pg_todos--X.sql) and
updated with ALTER EXTENSION pg_todos UPDATE keeps all its data, ends with exactly the objects
of a fresh install of this version (definitions, privileges, comments), works (deep nesting, a
claim and a dependency on old rows), re-grants the roles the old version granted, and passes
the same pg_regress suite as a fresh install (bin/installcheck with PGTODOS_UPGRADE_FROM, one
check per pg_regress test). One version: bin/test-integration test_upgrade.py -k 0.7.0
"""
import difflib
import os
import subprocess

import pytest

import pg
from checks import check

RELEASED = pg.released()
CURRENT = pg.version()

# every object of the schema, with its definition, its privileges and its comment
OBJECTS = """
SELECT 'function ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '')
       || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
  FROM pg_proc p WHERE p.pronamespace = 'todo'::regnamespace
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
