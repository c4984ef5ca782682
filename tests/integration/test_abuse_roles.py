"""abuse_roles: what a role handed to an app or an agent cannot do to other tenants, across
sessions (tests/pg_regress/sql/roles.sql shows the rest, statement by statement):

- through pgbouncer in transaction pooling, a context one client set at session level never
  acts for the next client of the same server connection;
- the locks of a tenant's whole-list writes and dependency changes are rows no other role can
  take: a role that holds the advisory locks 0.8.0 used (a hash of the tenant's name) blocks
  nothing;
- a bound agent's role cannot act for another tenant however it sets the context, and the
  answer is the same for a registered tenant and an unknown one.

pgbouncer (bin/setup installs it) listens on a Unix socket of its own.
"""
import os
import shutil
import subprocess
import time

import psycopg
import pytest

import pg
from checks import check

DB = "abuse"
SETUP = """
CREATE ROLE agent_acme LOGIN;
SELECT todo.grant_usage('agent_acme', 'acme', plain_sql => false);
BEGIN;
SELECT todo.set_context('acme', 'a-1');
INSERT INTO todo.todos (subject) VALUES ('acme one');
SELECT todo.set_context('globex', 'g-0');
INSERT INTO todo.todos (subject) VALUES ('globex secret');
COMMIT;
"""
BOUNCER_PORT = 6432  # names its socket only
bouncer_dir = None


@pytest.fixture(scope="module", autouse=True)
def abuse_database(cluster):
    cluster.database(DB, tenants=["acme", "globex"])
    cluster.psql("DROP ROLE IF EXISTS agent_acme")
    cluster.psql(SETUP, db=DB)
    yield
    cluster.psql(f"DROP DATABASE {DB} WITH (FORCE)")
    cluster.psql("DROP ROLE agent_acme")


@pytest.fixture
def pgbouncer(cluster, require):
    """pgbouncer in transaction pooling with one server connection, on a socket directory."""
    global bouncer_dir
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    require(os.access(binary, os.X_OK), "pgbouncer is not installed (bin/setup installs it)")
    bouncer_dir = os.path.join(pg.ROOT, "bouncer")
    os.makedirs(bouncer_dir, exist_ok=True)
    pg.own(bouncer_dir)
    files = {"pgbouncer.ini": f"""[databases]
{DB} = host={cluster.sock} port={cluster.port} dbname={DB}
[pgbouncer]
listen_addr =
listen_port = {BOUNCER_PORT}
unix_socket_dir = {bouncer_dir}
auth_type = trust
auth_file = {bouncer_dir}/users.txt
pool_mode = transaction
default_pool_size = 1
max_client_conn = 20
logfile = {bouncer_dir}/pgbouncer.log
pidfile = {bouncer_dir}/pgbouncer.pid
""", "users.txt": '"agent_login" ""\n'}
    for name, text in files.items():
        with open(os.path.join(bouncer_dir, name), "w") as f:
            f.write(text)
        pg.own(os.path.join(bouncer_dir, name))
    subprocess.run(pg.as_postgres([binary, "-d", os.path.join(bouncer_dir, "pgbouncer.ini")]), check=True)
    pidfile = os.path.join(bouncer_dir, "pgbouncer.pid")
    for _ in range(50):
        if os.path.exists(pidfile):
            break
        time.sleep(0.1)
    yield
    with open(pidfile) as f:
        os.kill(int(f.read()), 15)


def connect(user="agent_login", **kw):
    return psycopg.connect(dbname=DB, user=user, autocommit=True, **kw)


def sqlstate(conn, sql, params=None):
    """The SQLSTATE `sql` fails with (None when it succeeds); the connection stays usable."""
    try:
        conn.execute(sql, params)
        return None
    except psycopg.Error as e:
        return e.sqlstate



def test_pgbouncer_never_hands_a_stale_context_to_the_next_client(pgbouncer):
    bounced = dict(host=bouncer_dir, port=BOUNCER_PORT, dbname=DB, user="agent_login", autocommit=True)
    first = psycopg.connect(**bounced)
    first_pid = first.execute("SELECT pg_backend_pid()").fetchone()[0]
    first.execute("SET todo.tenant = 'globex'")
    first.execute("SET todo.conversation = 'g-1'")
    first.close()
    second = psycopg.connect(**bounced)
    second_pid = second.execute("SELECT pg_backend_pid()").fetchone()[0]
    check("pgbouncer hands the second client the first one's server connection", first_pid == second_pid,
          f"{first_pid} != {second_pid}")
    check("the settings the first client left are still on that connection",
          second.execute("SELECT current_setting('todo.tenant')").fetchone()[0] == "globex")
    check("... but a read of todos is refused (22023), not globex's",
          sqlstate(second, "SELECT count(*) FROM todo.todos") == "22023")
    check("... and so is the writ", sqlstate(second, "SELECT todo.todo_writ('/todo list')") == "22023")
    check("... and a plain INSERT", sqlstate(second, "INSERT INTO todo.todos (subject) VALUES ('stolen?')") == "22023")
    with second.transaction():
        second.execute("SELECT todo.set_context('acme', 'a-1')")
        seen = second.execute("SELECT DISTINCT tenant_id FROM todo.todos").fetchall()
        convo = second.execute("SELECT todo.current_conversation()").fetchone()[0]
    check("the second client's own context, in its transaction, sees its tenant only", seen == [("acme",)], seen)
    check("... with its own conversation, not the stale one", convo == "a-1", convo)
    second.close()
    with connect(user="postgres") as admin:
        n = admin.execute("SELECT count(*) FROM todo.todos WHERE subject = 'stolen?'").fetchone()[0]
    check("nothing was written for the stale context", n == 0, n)


def test_another_roles_advisory_locks_block_no_tenant():
    holder = connect()
    holder.autocommit = False
    holder.execute("SELECT pg_advisory_xact_lock(hashtext('globex'), hashtext('g-1'))")
    holder.execute("SELECT pg_advisory_xact_lock(hashtextextended('todo.dependencies ' || 'globex', 0))")
    writer = connect()
    writer.execute("SET statement_timeout = '5s'")
    with writer.transaction():
        writer.execute("SELECT todo.set_context('globex', 'g-1', 'agent-g')")
        replaced = writer.execute(
            "SELECT todo.call('todolist__set', %s::jsonb)",
            ('{"todos": [{"content": "g one", "status": "pending", "activeForm": "Doing g one"},'
             ' {"content": "g two", "status": "pending", "activeForm": "Doing g two"}]}',),
        ).fetchone()[0]
        ids = [r[0] for r in writer.execute("SELECT id FROM todo.todos WHERE conversation_id = 'g-1' ORDER BY id")]
        blocked = writer.execute("SELECT todo.block(%s, %s)", (ids[-1], ids[0])).fetchone()[0]
    check("a whole-list replace is not held by another role's advisory lock on its old key",
          "error" not in str(replaced).lower(), replaced)
    check("a dependency change is not held by it either", blocked is True, blocked)
    holder.rollback()
    holder.close()
    with connect(user="postgres") as admin:
        rows = admin.execute("SELECT tenant_id, name FROM todo.locks WHERE tenant_id = 'globex' ORDER BY name").fetchall()
    check("the tenant's locks are rows of todo.locks", rows == [("globex", "dependencies"), ("globex", "list:g-1")], rows)


def test_a_bound_role_cannot_act_for_another_tenant():
    agent = connect(user="agent_acme")
    codes = [sqlstate(agent, "SELECT todo.set_context(%s)", (t,)) for t in ("globex", "no-such-tenant")]
    check("a bound role naming a registered other tenant and an unknown one: the same refusal (42501)",
          codes == ["42501", "42501"], codes)
    msgs = []
    for t in ("globex", "no-such-tenant"):
        try:
            agent.execute("SELECT todo.set_context(%s)", (t,))
        except psycopg.Error as e:
            msgs.append(e.diag.message_primary)
    check("... in the same words", len(msgs) == 2 and msgs[0] == msgs[1], msgs)
    with agent.transaction():
        agent.execute("SELECT set_config('todo.tenant', 'globex', true)")
        code = sqlstate(agent, "SELECT todo.call('TaskList', '{}')")
    check("set_config(…, true) to another tenant: refused too", code == "42501", code)
    out = agent.execute("SELECT todo.todo_open_block('a-1')").fetchone()[0]
    check("with no context it acts for its own tenant", "acme one" in out and "globex" not in out, out)
    with agent.transaction():
        code = sqlstate(agent, "LOCK TABLE todo.todos IN ACCESS EXCLUSIVE MODE")
    check("it cannot lock todo.todos (42501)", code == "42501", code)
    agent.close()
