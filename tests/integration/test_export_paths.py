#!/usr/bin/env python3
"""export_paths: no stored text makes `pg_todos export` write outside its DIR or through a
symbolic link, `pg_todos import` reads nothing outside the project through a link, and what
the command prints never carries a terminal's control characters (issue 52, part 3).

Every field of a todo that becomes part of a file's path, for every format that makes one,
comes in three ways: imported from a tracker's files (a Claude Code task id, a Task Master
tag, a Backlog.md id), created over `/mcp` of `pg_todos serve` (beads' `create` with its own
`id`), and written with plain SQL (an `INSERT INTO todo.todos` of a hostile `external_id` or
list name). Each export must succeed inside DIR (the hostile part written escaped, as
docs/tools.md says: `%2F` for `/`, `%2E` for a leading `.`, …), change no file outside DIR,
and import back to the same ids and lists. Every check runs inside the test's own temporary
directory: an escape lands beside DIR, where the test looks for it.

One file: bin/test-integration test_export_paths.py
"""
import asyncio
import itertools
import json
import os
import subprocess

import psycopg
import pytest

import mcp_session
import web
from checks import check

DB = "export_paths"
ESC = "\x1b"
EXPORTS = itertools.count(1)


@pytest.fixture(scope="module")
def db(cluster):
    return cluster.database(DB, tenants=["acme"])


def run(cli, *args, rc=0):
    """`pg_todos <args>` as agent_login in tenant acme: (return code, stdout, stderr)."""
    env = {**os.environ, "PG_TODOS_TENANT": "acme", "PGDATABASE": DB, "PGUSER": "agent_login"}
    env.pop("PG_TODOS_CONVERSATION", None)
    r = subprocess.run([cli, *args], env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def sql(query, *args):
    """One statement as agent_login after set_context('acme', NULL, 'sql')."""
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c:
        with c.transaction():
            c.execute("SELECT todo.set_context('acme', NULL, 'sql')")
            c.execute(query, args)


def snapshot(root, skip):
    """Every file and link under `root` except those under `skip`: path → bytes (or link
    target)."""
    out = {}
    for d, dirs, files in os.walk(root):
        if os.path.abspath(d).startswith(os.path.abspath(skip)):
            continue
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, name)
            out[p] = ("link", os.readlink(p)) if os.path.islink(p) else open(p, "rb").read()
    return out


def export_stays_inside(cli, tmp_path, fmt, lst, what):
    """Exports list `lst` as `fmt` into a new DIR four levels down `tmp_path`; checks that it
    succeeded and that nothing outside DIR changed. The DIR and its files."""
    out = tmp_path / "a" / "b" / "c" / f"out-{fmt}-{next(EXPORTS)}"
    (tmp_path / "victim.json").write_text("SENTINEL")
    before = snapshot(tmp_path, out)
    rc, so, se = run(cli, "export", fmt, str(out), "--list", lst)
    after = snapshot(tmp_path, out)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    check(f"{what}: export {fmt} succeeds", rc == 0, se)
    check(f"{what}: export {fmt} changes no file outside DIR", not changed, changed)
    check(f"{what}: export {fmt} prints no control character", ESC not in so + se, repr(so + se))
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    return out, files


def test_claude_tasks_ids_and_lists_from_import(db, cli, tmp_path):
    """A Claude Code task file whose id climbs out, and a Task Master tag that does."""
    src = tmp_path / "src" / "tasks" / "ok-list"
    src.mkdir(parents=True)
    hostile = "../../../../victim"
    (src / "1.json").write_text(json.dumps({"id": hostile, "subject": "Overwrite settings", "status": "pending",
                                            "blocks": [], "blockedBy": []}))
    (src / "2.json").write_text(json.dumps({"id": "..", "subject": "A dot-dot id", "status": "pending"}))
    rc, so, se = run(cli, "import", "claude-tasks", str(tmp_path / "src" / "tasks"), "--list", "ct")
    check("claude-tasks: the hostile ids import", rc == 0 and "2 added" in so, so + se)
    out, files = export_stays_inside(cli, tmp_path, "claude-tasks", "ct", "a task id from a Claude Code file")
    check("claude-tasks: the ids are written escaped inside the list's directory",
          files == ["tasks/ok-list/%2E.%2F..%2F..%2F..%2Fvictim.json", "tasks/ok-list/%2E..json"],
          files)
    rc, so, se = run(cli, "import", "claude-tasks", str(out / "tasks"), "--list", "ct", "--dry-run")
    check("claude-tasks: the export imports back as the same tasks of the same list",
          rc == 0 and "0 added, 0 changed, 2 unchanged" in so, so + se)

    tm = tmp_path / "tm" / ".taskmaster" / "tasks"
    tm.mkdir(parents=True)
    tag = "../../../../victim"
    tm.joinpath("tasks.json").write_text(json.dumps({
        "master": {"tasks": [{"id": 1, "title": "plain", "status": "pending"}]},
        tag: {"tasks": [{"id": 1, "title": "in a hostile tag", "status": "pending"}]},
    }))
    rc, so, se = run(cli, "import", "taskmaster", str(tmp_path / "tm"), "--list", "tm")
    check("taskmaster: a hostile tag imports as the list tm#<tag>", rc == 0 and f"tm#{tag}" in so, so + se)
    for fmt in ("claude-tasks", "claude-todos"):
        out, files = export_stays_inside(cli, tmp_path, fmt, "tm", f"a Task Master tag as a {fmt} list")
        escaped = "%2E.%2F..%2F..%2F..%2Fvictim"
        want = (["tasks/%s/1.json" % escaped, "tasks/tm/1.json"] if fmt == "claude-tasks"
                else ["todos/%s.json" % escaped, "todos/tm.json"])
        check(f"{fmt}: the tag is one escaped file name", files == want, files)
        rc, so, se = run(cli, "import", fmt, str(out / fmt.split("-")[1]), "--list", "tm", "--dry-run")
        back = [line for line in so.splitlines() if line.endswith(f" in tm#{tag}") or f" in tm#{tag} (" in line]
        check(f"{fmt}: the escaped name imports back to the tag's list, as the same task",
              rc == 0 and back and not any(line.startswith("would add") for line in back), so + se)


def test_ids_and_lists_from_plain_sql(db, cli, tmp_path):
    """An INSERT of a hostile external id and list name, for each format that makes paths."""
    sql("INSERT INTO todo.todos (conversation_id, external_id, subject) VALUES ('sq', %s, 'by sql')",
        "../../../../victim")
    sql("INSERT INTO todo.todos (conversation_id, external_id, subject) VALUES ('sq', %s, %s)",
        "TASK-9", f"title with {ESC}[31m an escape")
    sql("INSERT INTO todo.todos (conversation_id, external_id, subject) VALUES (%s, '1', 'in a hostile list')",
        "sq#/tmp/../../victim")
    sql("INSERT INTO todo.todos (conversation_id, external_id, subject) VALUES (%s, '1', 'control list')",
        f"sq#a{ESC}b")
    for fmt in ("claude-tasks", "claude-todos", "backlog"):
        out, files = export_stays_inside(cli, tmp_path, fmt, "sq", f"an id and a list by SQL ({fmt})")
        check(f"{fmt}: no file name holds a control character or a leading dot",
              all(ESC not in f and not any(part.startswith(".") for part in f.split("/")) for f in files), files)
    check("backlog: a hostile id is one escaped file name",
          "backlog/tasks/%2E.%2F..%2F..%2F..%2Fvictim - by-sql.md" in files, files)
    rc, so, se = run(cli, "import", "backlog", str(out), "--list", "sq", "--dry-run")
    check("backlog: the export imports back to the same ids", rc == 0 and "0 added" in so, so + se)


def test_a_beads_create_over_mcp(db, cli, serve, tmp_path):
    """beads' `create` with its own id over /mcp, exported as each format that names files."""
    srv = serve(DB)
    _, tok = web.token(DB, "acme", "paths-agent")

    async def create():
        url = f"http://{web.HOST}:{srv.port}/mcp?list=mc&tools=beads"
        async with mcp_session.Http(url, tok) as c:
            return await c.call("create", {"title": "from mcp", "id": "../../../../victim"})
    _, is_error, text = asyncio.run(create())
    check("/mcp: beads create takes the hostile id", not is_error, text)
    for fmt in ("claude-tasks", "backlog"):
        out, files = export_stays_inside(cli, tmp_path, fmt, "mc", f"a beads id over /mcp ({fmt})")
        check(f"{fmt}: the id over /mcp is one escaped file name",
              any("%2E.%2F..%2F..%2F..%2Fvictim" in f for f in files), files)


LINKED_FILES = {"beads": ".beads/issues.jsonl", "taskmaster": ".taskmaster/tasks/tasks.json",
                "claude-todos": "todos/ln.json", "claude-tasks": "tasks/ln/bd-1.json",
                "backlog": "backlog/tasks/bd-1 - linked.md"}


@pytest.mark.parametrize("fmt", sorted(LINKED_FILES))
def test_export_writes_no_file_through_a_link(db, cli, tmp_path, fmt):
    """A link in DIR at a file the export writes is replaced, not written through; a linked
    directory inside DIR is refused before any file is written."""
    sql("INSERT INTO todo.todos (conversation_id, external_id, subject) VALUES ('ln', 'bd-1', 'linked') "
        "ON CONFLICT DO NOTHING")
    victim = tmp_path / "victim"
    victim.write_text("SENTINEL")
    out = tmp_path / "out"
    link = out / LINKED_FILES[fmt]
    link.parent.mkdir(parents=True)
    os.symlink(victim, link)
    rc, so, se = run(cli, "export", fmt, str(out), "--list", "ln")
    check(f"{fmt}: a linked file: the export succeeds", rc == 0, se)
    check(f"{fmt}: a linked file: its target is untouched", victim.read_text() == "SENTINEL", victim.read_text())
    check(f"{fmt}: a linked file: the link is replaced by the file",
          not os.path.islink(link) and ("bd-1" in link.read_text() or "linked" in link.read_text()))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out2 = tmp_path / "out2"
    top = LINKED_FILES[fmt].split("/")[0]
    out2.mkdir()
    os.symlink(elsewhere, out2 / top)
    rc, so, se = run(cli, "export", fmt, str(out2), "--list", "ln")
    check(f"{fmt}: a linked directory in DIR: the export is refused, naming it",
          rc == 1 and top in se and "link" in se, (rc, so, se))
    check(f"{fmt}: a linked directory in DIR: nothing written anywhere",
          not any(elsewhere.rglob("*")) and os.listdir(out2) == [top], list(elsewhere.rglob("*")))


def test_import_reads_nothing_outside_through_a_link(db, cli, tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"id": "bd-secret", "title": "read through a link", "status": "open",
                                  "priority": 1, "issue_type": "task"}) + "\n")
    project = tmp_path / "proj"
    (project / ".beads").mkdir(parents=True)
    os.symlink(secret, project / ".beads" / "issues.jsonl")
    rc, so, se = run(cli, "import", "beads", str(project), "--list", "im")
    check("import: a link out of the project is refused, naming it",
          rc == 1 and "issues.jsonl" in se and "outside" in se, (rc, so, se))
    (project / ".beads" / "issues.jsonl").unlink()
    (project / ".beads" / "real.jsonl").write_text(secret.read_text())
    os.symlink("real.jsonl", project / ".beads" / "issues.jsonl")
    rc, so, se = run(cli, "import", "beads", str(project), "--list", "im", "--dry-run")
    check("import: a link that stays inside the project is read", rc == 0 and "bd-secret in im" in so, (rc, so, se))

    outside = tmp_path / "outside-tasks"
    outside.mkdir()
    (outside / "task-1 - x.md").write_text("---\nid: TASK-1\ntitle: x\nstatus: To Do\n---\n")
    (project / "backlog").mkdir()
    os.symlink(outside, project / "backlog" / "tasks")
    rc, so, se = run(cli, "import", "backlog", str(project), "--list", "im")
    check("import: a linked directory out of the project is refused", rc == 1 and "outside" in se, (rc, so, se))


def test_printed_ids_are_escaped(db, cli, tmp_path):
    project = tmp_path / "proj"
    (project / ".beads").mkdir(parents=True)
    (project / ".beads" / "issues.jsonl").write_text(json.dumps(
        {"id": f"bd-{ESC}[2J{ESC}]0;pwned{chr(7)}", "title": "t", "status": "open", "priority": 1,
         "issue_type": "task"}) + "\n")
    rc, so, se = run(cli, "import", "beads", str(project), "--list", "pr", "--dry-run")
    check("import --dry-run: no control character printed", rc == 0 and ESC not in so and "\x07" not in so, repr(so))
    check("import --dry-run: the id shown with its control characters escaped",
          "bd-\\u{1b}[2J\\u{1b}]0;pwned\\u{7}" in so, so)
    todos = tmp_path / "todos"
    todos.mkdir()
    item = {"content": "c", "status": "pending", "id": f"a{ESC}[31m"}
    (todos / "s.json").write_text(json.dumps([item, item]))
    rc, so, se = run(cli, "import", "claude-todos", str(todos), "--list", "pr")
    check("an error naming an id: no control character printed", rc == 1 and "used twice" in se and ESC not in se, repr(se))
