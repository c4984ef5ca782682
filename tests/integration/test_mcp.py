#!/usr/bin/env python3
"""mcp: drives the pg_todos MCP server (`pg_todos mcp`) over stdio with the official MCP
Python SDK's client (a client this project did not write), as the plain role
agent_login:
  - tools/list is todo.tools(), tool for tool (names, descriptions, schemas, dialects; the
    list reads' `_meta.ui`, the board's MCP App, aside: test_mcp_app.py);
  - seed 003's example session, read from the seed itself, gives the seed's answers;
  - the context comes from the server's configuration and the MCP session: the agent
    recorded is the client's name, a "tenant" argument is refused by the schema;
  - two servers for two tenants with the same conversation name see nothing of each other;
  - a name several runtimes share is listed once by default (the first dialect's); kept to one
    runtime's dialect, the server offers and runs that runtime's tool of the name;
  - --tools keeps to one dialect; each runtime's dialect alone lists exactly its runtime's
    tools; a claim and a finish go through;
  - the text the model reads comes from todo.call_mcp: TaskCreate's, update_plan's, a Gemini
    write_todos refused (with every dialect, by bare name; kept to some, by dialect/name);
  - the default list is the project's, named from the directory the server starts in: it
    survives a restart and is shared in that directory (and through a symlink to it), not in
    another directory, not with --session-list, never with another tenant;
    CLAUDE_CODE_TASK_LIST_ID and PG_TODOS_CONVERSATION name a list across directories;
  - a missing database, extension or tenant, conflicting list flags: a clear message and
    exit status 2;
  - started while PostgreSQL is down (a cluster of the test's own, stopped): the server starts,
    initialize answers, tools/list answers the catalog the server was built with (of --tools:
    not checked against the database's dialects yet), a call is a tool error naming the
    database; once it is started, the same session lists the tools of --tools (checked then)
    and the same call succeeds; the catalog built in is what the extension of this checkout
    answers (bin/catalog writes it).
Every server runs in a directory of its test's own (cwd=), under a fresh temporary directory,
so no two tests share a project's list by accident. Seed 003 is read from fixtures/.
And the examples: a supervisor, two sub-agents and a listener that follows the change feed
(todo.changes_since), with psycopg and the writ (examples/supervisor.py) and over MCP, each
agent its own server (the old command name, pg_todos_mcp: examples/mcp_supervisor.py); each
checks the final state, and that its listener read the list with every todo completed.
"""
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import psycopg
import pytest

import mcp_session
import pg
from checks import check
from mcp_session import text
from web import libpq_env

DB = "mcp"
HERE = os.path.dirname(os.path.abspath(__file__))
SEED_003 = os.path.join(HERE, "fixtures", "003_ecd02d5fbd8c7fb0.txt")
SERVER = ROOT = None  # the pg_todos command, and the directory of the projects (the fixture's)


@pytest.fixture(scope="module", autouse=True)
def mcp_database(cluster, cli):
    global SERVER, ROOT
    SERVER = cli
    cluster.database(DB, tenants=["acme", "globex"])
    ROOT = tempfile.mkdtemp(prefix="pg_todos_mcp_test_")
    yield
    shutil.rmtree(ROOT, ignore_errors=True)

# the runtimes' dialects and exactly the tools each lists
RUNTIMES = {
    "claude-tasks": {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"},
    "claude-todowrite": {"TodoWrite"},
    "codex": {"update_plan"},
    "gemini": {"write_todos"},
    "cursor": {"todo_write"},
    "roo": {"update_todo_list"},
    "copilot": {"manage_todo_list"},
    "langchain": {"write_todos"},
    "openhands": {"task_tracker"},
    "qwen": {"todo_write"},
    "goose": {"todo__todo_write"},
    "hermes": {"todo"},
    "crush": {"todos"},
    "kimi": {"SetTodoList"},
    "vibe": {"todo"},
    "zed": {"update_plan"},
    "continue": {"Checklist"},
    "codebuff": {"write_todos"},
    "pydantic-ai": {"write_todos", "read_todos"},
    "droid": {"TodoWrite"},
    "mastra": {"task_write", "task_update", "task_complete", "task_check"},
    "agentscope": {"view_subtasks", "update_subtask_state", "finish_subtask", "create_plan", "revise_current_plan",
                   "finish_plan", "view_historical_plans", "recover_historical_plan"},
    "kiro": {"todo_list"},
    "beads": {"discover_tools", "get_tool_info", "context", "ready", "list", "show", "create", "claim", "update",
              "close", "reopen", "dep", "stats", "blocked"},
    "taskmaster": {"get_tasks", "get_task", "next_task", "set_task_status", "add_task", "add_subtask", "update_subtask",
                   "remove_task", "add_dependency", "remove_dependency", "validate_dependencies", "fix_dependencies",
                   "list_tags", "add_tag", "delete_tag", "use_tag", "rename_tag", "copy_tag", "parse_prd",
                   "expand_task", "expand_all", "analyze_project_complexity", "update", "update_task",
                   "scope_up_task", "scope_down_task", "research"},
    "backlog": {"task_create", "task_list", "task_search", "task_edit", "task_view", "task_archive", "task_complete"},
}
DIALECTS = {"plan", "opencode", "todolist", "tasks", "coord", *RUNTIMES}
# the dialects whose names an earlier dialect of the catalog has: listed by default under it
SHADOWED = {"langchain", "qwen", "vibe", "zed", "codebuff", "droid"}


def first_of_each_name(tools):
    """The tools with each name once, the first of the catalog's order."""
    seen = set()
    return [t for t in tools if not (t["name"] in seen or seen.add(t["name"]))]


def project(name):
    """A new directory to start servers in: a project of its own."""
    path = os.path.join(ROOT, name)
    os.mkdir(path)
    return path


def server_env(**extra):
    # not the runner's own PG_TODOS_* settings: a conversation or tenant set there would
    # change what the tests see
    return libpq_env(DB, **extra)


def Session(*args, cwd, client="mcp-test-client", **env):
    """One `pg_todos mcp ARGS` process, started in the directory cwd, and one MCP session."""
    return mcp_session.Stdio(SERVER, DB, *args, cwd=cwd, client=client, **env)


def subjects(listed):
    """The subjects of a TaskList answer ({"tasks": [...]}); anything else as it is."""
    return [t["subject"] for t in listed["tasks"]] if isinstance(listed, dict) and "tasks" in listed else listed


def sql(query, *args):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        return conn.execute(query, args).fetchall()


def seed_003_session():
    """The (arguments, answer) pairs of seed 003's example session, as the seed prints them."""
    text = open(SEED_003, encoding="utf-8").read()
    session = text[text.index("## Example Session"):]
    pairs = re.findall(r"→ todolist__set\((\{.*?\})\)\n← (\{.*?\})\n", session, re.S)
    return [(json.loads(a), json.loads(b)) for a, b in pairs]


async def catalog_and_seed_003():
    async with Session("--tenant", "acme", "--conversation", "conv-003", cwd=project("seed-003")) as s:
        listed = (await s.session.list_tools()).tools
        ours = [t.model_dump(by_alias=True, exclude_none=True) for t in listed]
        expected = first_of_each_name(sql("SELECT todo.tools()")[0][0])
        # but for the board's page, which the list reads name (`_meta.ui`: test_mcp_app.py)
        as_listed = [{**t, "_meta": {k: v for k, v in t["_meta"].items() if k != "ui"}} for t in ours]
        check("tools/list is todo.tools(), tool for tool, a shared name once (the first dialect's)",
              as_listed == expected, f"\n{json.dumps(as_listed)[:300]}\n{json.dumps(expected)[:300]}")
        names = [t["name"] for t in ours]
        check("each name is listed once", len(names) == len(set(names)), names)
        dialects = {t["_meta"]["pg_todos/dialect"] for t in ours}
        check("every dialect is listed by default, but those whose names an earlier one has",
              dialects == DIALECTS - SHADOWED, sorted(dialects))
        steps = seed_003_session()
        check("seed 003's example session has its four steps", len(steps) == 4, len(steps))
        for n, (args, answer) in enumerate(steps, 1):
            got, err = await s.answer("todolist__set", args)
            check(f"seed 003 example, step {n}: the seed's answer", got == answer and not err, f"{got} != {answer}")
        rows = sql("""SELECT subject, status, active_form FROM todo.todos
                       WHERE tenant_id = 'acme' AND conversation_id = 'conv-003' ORDER BY position""")
        want = [(t["content"], t["status"], t["activeForm"]) for t in steps[-1][0]["todos"]]
        check("the session's list is in Postgres, row for row", rows == want, rows)
        got, err = await s.answer("todolist__get", {})
        check("todolist__get returns the last list", got.get("todos") == steps[-1][0]["todos"] and not err, got)
        got, err = await s.answer("todolist__set", {"todos": [{"content": "", "status": "pending", "activeForm": "x"}]})
        check("a seed 003 error object is a tool error", err and got["error"]["code"] == "empty_content", got)
        got, err = await s.answer("create_todo", {"items": [{"title": "plan"}], "tenant": "globex"})
        check("the context never comes from the arguments", err and got["error"]["code"] == "invalid_arguments", got)
        got, err = await s.answer("create_todo", {"items": [{"title": "who made me"}]})
        rows = sql("""SELECT tenant_id, conversation_id, agent_id LIKE 'mcp-test-client@mcp-%%', turn_id LIKE 'mcp-%%'
                        FROM todo.todos WHERE subject = 'who made me'""")
        check("rows carry the server's tenant and conversation, the session's turn, the client's name and session as agent",
              rows == [("acme", "conv-003", True, True)] and not err, (rows, got))


async def two_tenants():
    cwd = project("two-tenants")
    async with Session("--tenant", "acme", "--conversation", "shared", cwd=cwd, client="agent-a") as a, \
               Session("--tenant", "globex", "--conversation", "shared", cwd=cwd, client="agent-b") as b:
        added, _ = await a.answer("AddTask", {"title": "acme only"})
        task_id = added["id"]
        listed_b, _ = await b.answer("ListTasks", {})
        check("tenant B's list of the same conversation is empty", listed_b == {"tasks": []} or listed_b == [], listed_b)
        done_b, err = await b.answer("CompleteTask", {"taskId": str(task_id)})
        missing, _ = await b.answer("CompleteTask", {"taskId": "99999"})
        check("tenant B completing tenant A's task: the answer for a task that never existed",
              err and done_b == missing, f"{done_b} vs {missing}")
        listed_a, _ = await a.answer("ListTasks", {})
        mine = [t for t in listed_a["tasks"] if t["id"] == task_id]
        check("tenant A's task is untouched", len(mine) == 1 and mine[0]["done"] is False, listed_a)


async def one_dialect_and_claims():
    cwd = project("one-dialect")
    async with Session("--tenant", "acme", "--conversation", "conv-coord", "--tools", "todolist", cwd=cwd, client="only-003") as s:
        names = [t.name for t in (await s.session.list_tools()).tools]
        check("--tools todolist lists the todolist dialect's tools only", names == ["todolist__get", "todolist__set"], names)
        got, err = await s.answer("AddTask", {"title": "x"})
        check("a tool outside the dialects is an unknown tool", err and got["error"]["code"] == "unknown_tool", got)
    async with Session("--tenant", "acme", "--conversation", "conv-coord", "--tools", "coord,001", cwd=cwd, client="worker-1") as s:  # 001: the plan dialect's alias
        await s.answer("create_todo", {"items": [{"title": "first"}, {"title": "second"}]})
        claimed, err = await s.answer("claim_todo", {})
        check("claim_todo over MCP claims for the client's agent", claimed.get("claimed") and not err, claimed)
        if not claimed.get("claimed"):
            return
        done, err = await s.answer("finish_todo", {"id": claimed["id"], "fence": claimed["fence"]})
        check("finish_todo with the claim's fence", done == {"id": claimed["id"], "status": "completed"} and not err, done)
        stale, err = await s.answer("finish_todo", {"id": claimed["id"], "fence": claimed["fence"]})
        check("the same fence again is a stale claim", err and stale["error"]["code"] == "stale_claim", stale)
        holder = sql("SELECT agent_id FROM todo.events WHERE tenant_id = 'acme' AND todo_id = %s AND changes ? 'fence'", claimed["id"])
        check("the claim's event names the client and its session",
              len(holder) == 1 and holder[0][0].startswith("worker-1@mcp-"), holder)


async def runtime_dialects():
    catalog = sql("SELECT todo.tools()")[0][0]
    cwd = project("runtimes")
    for dialect, names in RUNTIMES.items():
        in_order = [t["name"] for t in catalog if t["_meta"]["pg_todos/dialect"] == dialect]
        async with Session("--tenant", "acme", "--session-list", "--tools", dialect, cwd=cwd) as s:
            listed = [t.name for t in (await s.session.list_tools()).tools]
        check(f"--tools {dialect} lists exactly {', '.join(sorted(names))}, in the catalog's order",
              sorted(listed) == sorted(names) and listed == in_order, (listed, in_order))


async def shared_names():
    """A server kept to one runtime's dialect offers that runtime's tool under a name another
    runtime also uses, and runs that runtime's tool, not the first of the name."""
    cwd = project("shared-names")
    async with Session("--tenant", "acme", "--session-list", "--tools", "qwen", cwd=cwd) as s:
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in (await s.session.list_tools()).tools]
        qwen = [t for t in sql("SELECT todo.tools()")[0][0] if t["_meta"]["pg_todos/dialect"] == "qwen"]
        check("--tools qwen: the one tool is todo_write with Qwen Code's schema, as todo.tools() has it",
              tools == qwen and "blockedBy" in tools[0]["inputSchema"]["properties"]["todos"]["items"]["properties"],
              tools)
        r = await s.raw("todo_write", {"todos": [{"content": "a", "status": "pending", "id": "a", "blockedBy": ["a"]}]})
        check("--tools qwen: todo_write refuses in Qwen Code's words",
              r.is_error is True and text(r) == 'Todo "a" must not depend on itself.', (text(r), r.is_error))
        r = await s.raw("todo_write", {"todos": [{"content": "Design", "status": "in_progress", "id": "d"},
                                                 {"content": "Build", "status": "pending", "id": "b", "blockedBy": ["d"]}]})
        check("--tools qwen: todo_write writes and its text carries the system reminder",
              not r.is_error and text(r).startswith("Todos have been modified successfully.")
              and '{"content":"Build","status":"pending","id":"b","blockedBy":["d"]}' in text(r), (text(r), r.is_error))
    async with Session("--tenant", "acme", "--session-list", "--tools", "zed", cwd=cwd) as s:
        r = await s.raw("update_plan", {"plan": [{"step": "Find it", "status": "in_progress", "priority": "high"}]})
        check("--tools zed: update_plan takes a priority", not r.is_error and text(r) == "Plan updated", (text(r), r.is_error))
    async with Session("--tenant", "acme", "--session-list", "--tools", "vibe", cwd=cwd) as s:
        r = await s.raw("todo", {"action": "write", "todos": [{"id": "1", "content": "Profile"}]})
        check("--tools vibe: todo is Mistral Vibe's", not r.is_error and text(r).startswith("message: Updated 1 todos\n"),
              (text(r), r.is_error))
    async with Session("--tenant", "acme", "--session-list", "--tools", "hermes", cwd=cwd) as s:
        r = await s.raw("todo", {})
        check("--tools hermes: todo is Hermes'", not r.is_error and text(r).startswith('{"todos": []'), (text(r), r.is_error))
    # LangChain's one write per turn: the server's own per-session turn is no model turn
    for args, second in [([], "written"), (["--turn", "t-1"], "refused")]:
        how = " ".join(["--tools langchain", *args])
        async with Session("--tenant", "acme", "--session-list", "--tools", "langchain", *args, cwd=cwd) as s:
            todos = {"todos": [{"content": "Run tests", "status": "pending"}]}
            first, again = await s.raw("write_todos", todos), await s.raw("write_todos", todos)
            check(f"{how}: write_todos answers with the list's Python repr",
                  not first.is_error and text(first) == "Updated todo list to [{'content': 'Run tests', 'status': 'pending'}]",
                  (text(first), first.is_error))
            check(f"{how}: a second write_todos is {second}",
                  (again.is_error is True and "should never be called multiple times in parallel" in text(again))
                  == (second == "refused"), (text(again), again.is_error))


async def what_the_model_reads():
    """The result todo.call_mcp builds reaches the client as is: by bare name with every dialect
    exposed, by dialect/name with the server kept to some."""
    cwd = project("texts")
    for how, args in [("every dialect", []), ("--tools claude-tasks,codex,gemini", ["--tools", "claude-tasks,codex,gemini"])]:
        async with Session("--tenant", "acme", "--session-list", *args, cwd=cwd) as s:
            subject = "Write the release notes"
            r = await s.raw("TaskCreate", {"subject": subject, "description": "for the next release"})
            task = (r.structured_content or {}).get("task") or {}
            tid = task.get("id")
            check(f"{how}: TaskCreate's text is Task #<id> created successfully: <subject>",
                  not r.is_error and isinstance(tid, str) and text(r) == f"Task #{tid} created successfully: {subject}",
                  (text(r), r.is_error))
            check(f"{how}: TaskCreate's structuredContent is {{task: {{id, subject}}}}, the id a string of digits",
                  r.structured_content == {"task": {"id": tid, "subject": subject}} and isinstance(tid, str) and tid.isdigit(),
                  r.structured_content)
            r = await s.raw("update_plan", {"explanation": "start", "plan": [
                {"step": "read the code", "status": "in_progress"}, {"step": "fix the bug", "status": "pending"}]})
            check(f"{how}: update_plan's text is Plan updated", not r.is_error and text(r) == "Plan updated", (text(r), r.is_error))
            r = await s.raw("write_todos", {"todos": [
                {"description": "one", "status": "in_progress"}, {"description": "two", "status": "in_progress"}]})
            check(f"{how}: write_todos with two in_progress is a tool error with Gemini's words",
                  r.is_error is True and text(r) == 'Invalid parameters: Only one task can be "in_progress" at a time.',
                  (text(r), r.is_error))


async def lists_survive_the_session():
    a, b, c = project("app-a"), project("app-b"), project("app-c")
    link = os.path.join(ROOT, "link-to-app-a")
    os.symlink(a, link)
    subject = "survive a restart"
    async with Session("--tenant", "acme", cwd=a, client="first") as s:
        r = await s.raw("TaskCreate", {"subject": subject, "description": "made before the restart"})
        tid = ((r.structured_content or {}).get("task") or {}).get("id")
        check("TaskCreate in project A", not r.is_error and bool(tid), (text(r), r.structured_content))
    rows = sql("SELECT conversation_id FROM todo.todos WHERE tenant_id = 'acme' AND subject = %s", subject)
    check("the default list is the project's: project:<the directory's real path>",
          rows == [("project:" + os.path.realpath(a),)], rows)
    # the first server has stopped; a new one in the same directory, kept to Claude's tools
    async with Session("--tenant", "acme", "--tools", "claude-tasks", cwd=a, client="second") as s:
        listed, err = await s.answer("TaskList", {})
        check("a new server in directory A: TaskList shows the task (the list survived the restart)",
              not err and subjects(listed) == [subject], listed)
        got, err = await s.answer("TaskGet", {"taskId": tid})
        check("a new server in directory A: TaskGet finds it by its id",
              not err and isinstance(got, dict) and (got.get("task") or {}).get("subject") == subject, got)
    async with Session("--tenant", "acme", cwd=link) as s:
        listed, err = await s.answer("TaskList", {})
        check("a server started through a symlink to A: the same list", not err and subjects(listed) == [subject], listed)
    async with Session("--tenant", "acme", cwd=b) as s:
        listed, err = await s.answer("TaskList", {})
        check("a server in directory B: an empty list", not err and subjects(listed) == [], listed)
    async with Session("--tenant", "acme", "--session-list", cwd=a) as s:
        listed, err = await s.answer("TaskList", {})
        check("--session-list in directory A: an empty list", not err and subjects(listed) == [], listed)
    async with Session("--tenant", "acme", cwd=a, PG_TODOS_SESSION_LIST="1") as s:
        listed, err = await s.answer("TaskList", {})
        check("PG_TODOS_SESSION_LIST=1 in directory A: an empty list", not err and subjects(listed) == [], listed)
    async with Session("--tenant", "globex", cwd=a) as s:
        listed, err = await s.answer("TaskList", {})
        check("tenant B in directory A: an empty list", not err and subjects(listed) == [], listed)

    # two servers running at once in one directory share its list; with --session-list, not
    async with Session("--tenant", "acme", cwd=c, client="one") as one, \
               Session("--tenant", "acme", cwd=c, client="two") as two, \
               Session("--tenant", "acme", "--session-list", cwd=c, client="own-1") as own1, \
               Session("--tenant", "acme", "--session-list", cwd=c, client="own-2") as own2:
        await one.answer("TaskCreate", {"subject": "shared in C", "description": "-"})
        listed, err = await two.answer("TaskList", {})
        check("two servers running in directory C share its list", not err and subjects(listed) == ["shared in C"], listed)
        await own1.answer("TaskCreate", {"subject": "own list", "description": "-"})
        listed, err = await own2.answer("TaskList", {})
        check("two --session-list servers in one directory do not share a list", not err and subjects(listed) == [], listed)
        listed, err = await own1.answer("TaskList", {})
        check("a --session-list server sees its own list", not err and subjects(listed) == ["own list"], listed)

    # a named list: Claude Code's variable names it across directories, ours wins over it
    team = f"team-{os.getpid()}"
    async with Session("--tenant", "acme", cwd=a, CLAUDE_CODE_TASK_LIST_ID=team) as s:
        await s.answer("TaskCreate", {"subject": "team task", "description": "-"})
    async with Session("--tenant", "acme", cwd=b, CLAUDE_CODE_TASK_LIST_ID=team) as s:
        listed, err = await s.answer("TaskList", {})
        check("CLAUDE_CODE_TASK_LIST_ID: the same list from directory B", not err and subjects(listed) == ["team task"], listed)
    async with Session("--tenant", "acme", cwd=b, CLAUDE_CODE_TASK_LIST_ID=team, PG_TODOS_CONVERSATION=f"{team}-other") as s:
        listed, err = await s.answer("TaskList", {})
        check("PG_TODOS_CONVERSATION wins over CLAUDE_CODE_TASK_LIST_ID", not err and subjects(listed) == [], listed)
    async with Session("--tenant", "acme", "--conversation", team, cwd=c) as s:
        listed, err = await s.answer("TaskList", {})
        check("--conversation names the same list", not err and subjects(listed) == ["team task"], listed)


def startup_errors():
    cwd = project("startup")

    def run(*args, **env):
        p = subprocess.run([SERVER, "mcp", *args], env=server_env(**env), cwd=cwd, input="", capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr.strip()

    code, err = run("--tenant", "acme", PGDATABASE="no_such_db")
    check("no database: exit 2 and why", code == 2 and "cannot connect to the database" in err and "no_such_db" in err, (code, err))
    code, err = run("--tenant", "acme", PGDATABASE="postgres")
    check("no extension: exit 2 and what to run", code == 2 and "CREATE EXTENSION pg_todos" in err, (code, err))
    code, err = run("--tenant", "initech")
    check("an unregistered tenant: exit 2 and why", code == 2 and 'tenant "initech" is not registered' in err, (code, err))
    code, err = run()
    check("no tenant: exit 2 and the usage", code == 2 and "--tenant" in err and "Usage: pg_todos mcp" in err, (code, err))
    code, err = run("--tenant", "acme", "--tools", "seed-9")
    check("an unknown dialect: exit 2", code == 2 and 'unknown dialect "seed-9"' in err, (code, err))
    code, err = run("--tenant", "acme", "--conversation", "c", "--session-list")
    check("--conversation with --session-list: exit 2 and why",
          code == 2 and "--conversation and --session-list: pass one or the other" in err, (code, err))
    code, err = run("--tenant", "acme", PG_TODOS_SESSION_LIST="maybe")
    check("PG_TODOS_SESSION_LIST neither 1 nor 0: exit 2 and why", code == 2 and "PG_TODOS_SESSION_LIST" in err, (code, err))


def test_the_catalog_and_seed_003s_session():
    asyncio.run(catalog_and_seed_003())


def test_two_tenants_see_nothing_of_each_other():
    asyncio.run(two_tenants())


def test_one_dialect_and_claims():
    asyncio.run(one_dialect_and_claims())


def test_each_runtimes_dialect_alone():
    asyncio.run(runtime_dialects())


def test_shared_names_in_one_runtimes_dialect():
    asyncio.run(shared_names())


def test_what_the_model_reads():
    asyncio.run(what_the_model_reads())


def test_the_projects_list_survives_the_session():
    asyncio.run(lists_survive_the_session())


def test_startup_errors():
    startup_errors()


async def a_database_away_at_start(db, cwd):
    async with Session("--tenant", "acme", "--conversation", "down-list", "--tools", "todolist", cwd=cwd) as s:
        check("the database down at start: initialize answered", True)
        names = await s.names()
        check("the database down: tools/list answers the built-in catalog's tools of --tools",
              sorted(names) == ["todolist__get", "todolist__set"], names)
        write = {"todos": [{"content": "while down", "status": "pending", "activeForm": "x"}]}
        _, err, text = await s.call("todolist__set", write)
        check("the database down: a call is a tool error naming the database",
              err and "database" in text and ("unavailable" in text or "connect" in text), text)
        db.start()
        names = await s.names()
        check("the database back: the same session lists the tools of --tools", sorted(names) == ["todolist__get", "todolist__set"],
              names)
        _, err, text = await s.call("todolist__set", write)
        check("the database back: the same call succeeds", not err, text)


def test_the_built_in_catalog_is_the_extensions():
    """The catalog `pg_todos mcp` lists while the database is away (cli/src/mcp/catalog.json)
    is what the extension of this checkout answers (cli/src/mcp/catalog.sql); bin/catalog
    writes it again."""
    with open(os.path.join(pg.REPO, "cli/src/mcp/catalog.sql")) as f:
        sql = f.read()
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as c:
        cur = c.execute(sql)
        while cur.description is None and cur.nextset():
            pass  # the CREATE EXTENSION's result, then the catalog's
        answered = cur.fetchone()[0] + "\n"  # as psql -At prints it
    with open(os.path.join(pg.REPO, "cli/src/mcp/catalog.json")) as f:
        built_in = f.read()
    check("the built-in catalog is todo.tools() and todo.dialects() (else run bin/catalog)", answered == built_in,
          f"{len(answered)} bytes answered, {len(built_in)} built in")


def test_a_server_started_while_the_database_is_down(new_cluster):
    db = new_cluster("mcp_down")
    db.database(DB, tenants=["acme"])
    db.stop()
    asyncio.run(a_database_away_at_start(db, project("database-down")))


@pytest.mark.parametrize("example", ["supervisor", "mcp_supervisor"])
def test_the_example_supervisors(example):
    args = ["--dbname", DB, "--user", "agent_login", "--tenant", "acme"]
    if example == "mcp_supervisor":
        args = ["--server", SERVER + "_mcp", *args]
    run = subprocess.run([sys.executable, "-u", os.path.join(pg.REPO, "examples", f"{example}.py"), *args],
                         capture_output=True, text=True, timeout=300)
    print(run.stdout[-2000:])
    check(f"examples/{example}.py ends with the state it expects", run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:])
