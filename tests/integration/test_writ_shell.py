#!/usr/bin/env python3
"""writ_shell: `pg_todos writ`, the `/todo` writ from a shell (issue 55, item 8), against a
database with the extension, as the plain role agent_login in tenant acme.

The answer is printed as todo.todo_writ returns it; the todos land on the project's list of
the working directory (the list `pg_todos mcp` started there uses), read back with SQL;
`--list` wins over PG_TODOS_CONVERSATION, which wins over the project; standard input (no
argument, or `-`) carries a heredoc of several lines, bounded by todo.max_message_size; the
default agent is the same from one call to the next (a todo claimed by one call is finished
by the next); exit status 0 when every command ran, 1 when a block says ERR:, 2 for a usage,
configuration or database error with a message naming what to fix.

One file: bin/test-integration test_writ_shell.py
"""
import os
import re
import socket
import subprocess

import psycopg
import pytest

from checks import check

DB = "writ_shell"
LIMIT = 256 * 1024  # todo.max_message_size's default


@pytest.fixture(scope="module")
def db(cluster):
    name = cluster.database(DB, tenants=["acme"])
    cluster.database("writ_shell_bare", extension=False)
    return name


def run(cli, *args, cwd=None, stdin=None, env=None, drop=()):
    """`pg_todos writ <args>` as agent_login in tenant acme (USER=writer): (return code, stdout,
    stderr). `env` adds variables, `drop` removes some."""
    e = {**os.environ, "PG_TODOS_TENANT": "acme", "PGDATABASE": DB, "PGUSER": "agent_login", "USER": "writer"}
    for k in ("PG_TODOS_CONVERSATION", "PG_TODOS_AGENT", "PG_TODOS_DATABASE_URL", "DATABASE_URL", *drop):
        e.pop(k, None)
    e.update(env or {})
    r = subprocess.run([cli, "writ", *args], cwd=cwd, env=e, input=stdin if stdin is not None else "",
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def rows(query, *args):
    """The rows of a query as agent_login in tenant acme (its lists: any)."""
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c:
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', NULL, 'sql')")
            return c.execute(query, args).fetchall()


def added(out):
    """The ids of the `OK: added #N` lines of an answer."""
    return [int(n) for n in re.findall(r"^OK: added #(\d+) — ", out, re.M)]


def test_add_then_list_on_the_projects_list(cli, db, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    rc, out, err = run(cli, "/todo add Fix the parser", cwd=app)
    (n,) = added(out) or [None]
    check("an add exits 0 and prints its framed block, nothing added",
          rc == 0 and out == f"[/todo add Fix the parser]\nOK: added #{n} — Fix the parser\n[END TODO]\n" and err == "",
          (rc, out, err))
    rc, out, err = run(cli, "/todo", "list", cwd=app)
    check("a list, its words as separate arguments, prints the list's framed block",
          rc == 0 and out == f"[/todo list]\n1 open (0 in progress, 1 pending):\n#{n} [pending] Fix the parser\n"
          "[END TODO]\n", (rc, out, err))
    got = rows("SELECT conversation_id, subject, agent_id FROM todo.todos WHERE id = %s", n)
    project = "project:" + os.path.realpath(app)
    check("the todo is on the project's list, by the default agent shell:<user>@<host>",
          got == [(project, "Fix the parser", f"shell:writer@{socket.gethostname()}")], got)
    link = tmp_path / "link"
    link.symlink_to(app)
    rc, out, _ = run(cli, "/todo list", cwd=link)
    check("through a symbolic link to the project: the same list", rc == 0 and f"#{n} [pending]" in out, out)
    other = tmp_path / "other"
    other.mkdir()
    rc, out, _ = run(cli, "/todo list", cwd=other)
    check("another directory has a list of its own", rc == 0 and "(no todos)" in out, out)


def test_list_flag_wins_over_the_variable_and_the_project(cli, db, tmp_path):
    rc, out, _ = run(cli, "/todo add in the flag's list", "--list", "flag-list", cwd=tmp_path,
                     env={"PG_TODOS_CONVERSATION": "env-list"})
    rc2, out2, _ = run(cli, "/todo add in the variable's list", cwd=tmp_path, env={"PG_TODOS_CONVERSATION": "env-list"})
    got = rows("SELECT subject, conversation_id FROM todo.todos WHERE subject LIKE 'in the %%' ORDER BY id")
    check("--list, then PG_TODOS_CONVERSATION, then the project",
          (rc, rc2) == (0, 0) and got == [("in the flag's list", "flag-list"), ("in the variable's list", "env-list")],
          (out, out2, got))


def test_standard_input_carries_several_lines(cli, db, tmp_path):
    heredoc = ("I'll plan this.\n/todo add write the release notes\nthe changes of 1.2.0\n\n/endtodo\n"
               "/todo add tag the release\n/todo list\n")
    rc, out, err = run(cli, cwd=tmp_path, stdin=heredoc)
    a, b = added(out) + [None, None][len(added(out)):]
    check("no argument: standard input, every command run, prose ignored",
          rc == 0 and out == f"[/todo add write the release notes]\nOK: added #{a} — write the release notes\n"
          f"  description: the changes of 1.2.0…\n[END TODO]\n\n[/todo add tag the release]\n"
          f"OK: added #{b} — tag the release\n[END TODO]\n\n[/todo list]\n2 open (0 in progress, 2 pending):\n"
          f"#{a} [pending] write the release notes\n#{b} [pending] tag the release\n[END TODO]\n", (rc, out, err))
    got = rows("SELECT description FROM todo.todos WHERE id = %s", a)
    check("the body is the description", got == [("the changes of 1.2.0\n",)], got)
    rc, out, _ = run(cli, "-", cwd=tmp_path, stdin=f"/todo done {b}\n")
    check("the argument - reads standard input too", rc == 0 and f"OK: completed #{b}" in out, out)


def test_the_default_agent_holds_its_claim_from_one_call_to_the_next(cli, db, tmp_path):
    rc, out, _ = run(cli, "/todo add claimed from a shell", cwd=tmp_path)
    (n,) = added(out)
    rc1, out1, _ = run(cli, f"/todo claim {n}", cwd=tmp_path)
    rc2, out2, _ = run(cli, f"/todo done {n}", "--agent", "someone-else", cwd=tmp_path)
    rc3, out3, _ = run(cli, f"/todo done {n}", cwd=tmp_path)
    check("another agent is refused the claimed todo (exit 1), the claimer's next call finishes it",
          (rc1, rc2, rc3) == (0, 1, 0) and "is claimed by shell:writer@" in out2 and f"OK: completed #{n}" in out3,
          (out1, out2, out3))


def test_an_err_block_exits_1_and_the_other_commands_still_run(cli, db, tmp_path):
    rc, out, err = run(cli, "/todo add still added", "/todo start 999999", "/todo Add upper", cwd=tmp_path)
    check("exit 1, both ERR blocks printed",
          rc == 1 and out.count("\nERR: ") == 2 and "[/todo start 999999]\nERR: usage: /todo start" in out, (rc, out))
    check("the add before them ran", rows("SELECT count(*) FROM todo.todos WHERE subject = 'still added'") == [(1,)])
    rc, out, err = run(cli, cwd=tmp_path, stdin="/todo add half\na body without its end\n")
    check("a body without /endtodo: exit 1", rc == 1 and "ERR: missing /endtodo terminator" in out, (rc, out))


def test_configuration_errors_exit_2_naming_what_to_fix(cli, db, tmp_path):
    rc, out, err = run(cli, "/todo list", cwd=tmp_path, drop=["PG_TODOS_TENANT"])
    check("no tenant: exit 2", rc == 2 and out == "" and "no tenant: pass --tenant <id> or set PG_TODOS_TENANT" in err,
          (rc, err))
    rc, out, err = run(cli, "/todo list", "--tenant", "globex", cwd=tmp_path)
    check("a tenant not registered: exit 2 with the extension's message and hint",
          rc == 2 and out == "" and 'pg_todos writ: 42704: tenant "globex" is not registered' in err
          and "INSERT INTO todo.tenants" in err, (rc, err))
    rc, out, err = run(cli, cwd=tmp_path, stdin="/todo list\n", env={"PGDATABASE": "writ_shell_bare"})
    check("no extension: exit 2 saying CREATE EXTENSION pg_todos", rc == 2 and out == ""
          and err.strip() == 'pg_todos writ: the pg_todos extension is not installed in database "writ_shell_bare": '
          "CREATE EXTENSION pg_todos", (rc, err))
    rc, out, err = run(cli, "/todo list", "--database-url", "host=/nonexistent dbname=x", cwd=tmp_path)
    check("a database that cannot be reached: exit 2", rc == 2 and out == "" and "pg_todos writ: " in err, (rc, err))
    rc, out, err = run(cli, "/todo list", "--bogus", cwd=tmp_path)
    check("an unknown flag: exit 2 with the usage", rc == 2 and "Usage: pg_todos writ" in err, (rc, err))


def test_no_todo_line_and_the_input_limit(cli, db, tmp_path):
    rc, out, err = run(cli, "just prose, /todo in the middle of a line", cwd=tmp_path)
    check("no /todo line: nothing printed, exit 0, a hint on standard error",
          rc == 0 and out == "" and "no /todo line in the message" in err, (rc, out, err))
    rc, out, err = run(cli, cwd=tmp_path, stdin="x" * LIMIT)
    check("standard input of exactly todo.max_message_size bytes is read", rc == 0 and out == "", (rc, err[:300]))
    before = rows("SELECT count(*) FROM todo.todos")
    rc, out, err = run(cli, cwd=tmp_path, stdin="/todo add over the limit\n" + "x" * LIMIT)
    check("one byte more: exit 2 naming the limit, nothing ran",
          rc == 2 and out == "" and f"over {LIMIT} bytes" in err and "todo.max_message_size" in err
          and rows("SELECT count(*) FROM todo.todos") == before, (rc, err))
