#!/usr/bin/env python3
"""tool hints: what each tool's MCP annotations and output schema promise, held against what
the tool does, as the plain role agent_login:
  - every tool of todo.tools() carries `annotations` with the four hints, booleans; a tool
    annotated read-only writes nothing: each one, called through todo.call_mcp on a list with
    todos, claims and dependencies (with the arguments it needs to answer), leaves every todo,
    every event and every dependency as it was, and answers no error (but the tools that only
    say they need a model);
  - every answer of a tool with an `outputSchema` that is no error is valid against it
    (JSON Schema 2020-12, with the `jsonschema` package), over a run that calls each such tool
    in its usual ways: created, listed, completed, claimed, renewed, released, blocked; and a
    schema is no formality: a wrong answer is found invalid;
  - over stdio, the official MCP Python SDK's client lists the annotations and output schemas
    as todo.tools() has them, and calls each tool with an output schema: the SDK checks the
    structured content against the schema itself and raises when it does not fit.
"""
import asyncio
import json
import tempfile

import jsonschema
import psycopg
import pytest

import mcp_session
from checks import check

DB = "tool_hints"
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# the Task Master tools that need a model answer an error and write nothing
MODEL_TOOLS = {"parse_prd", "expand_task", "expand_all", "analyze_project_complexity", "update", "update_task",
               "scope_up_task", "scope_down_task", "research"}
SERVER = None


@pytest.fixture(scope="module", autouse=True)
def hints_database(cluster, cli):
    global SERVER
    SERVER = cli
    cluster.database(DB, tenants=["acme"])


def connect():
    return psycopg.connect(dbname=DB, user="agent_login", autocommit=True)


def call(conn, tool, args, conversation="hints", turn="turn-1"):
    """todo.call_mcp(tool, args) in its own transaction, bound to the list `conversation` (the
    trackers' project arguments name no other list: todo.list_bound)."""
    with conn.transaction():
        conn.execute("SELECT set_config('todo.list_bound', 'on', true)")
        conn.execute("SELECT todo.set_context('acme', %s, 'agent-a', %s)", (conversation, turn))
        return conn.execute("SELECT todo.call_mcp(%s, %s::jsonb)", (tool, json.dumps(args))).fetchone()[0]


def catalog(conn):
    return conn.execute("SELECT todo.tools()").fetchone()[0]


def state(conn):
    """Everything a write would change, for the tenant: todos, events, dependencies."""
    with conn.transaction():
        conn.execute("SELECT todo.set_context('acme')")
        return [conn.execute(q).fetchall() for q in (
            "SELECT t::text FROM todo.todos t ORDER BY id",
            "SELECT count(*) FROM todo.events",
            "SELECT d::text FROM todo.dependencies d ORDER BY 1")]


def seed_list(conn):
    """A list with five todos in every state a reader meets: one claimed, one blocked by
    another, one with a subtask, one completed. Their ids."""
    ids = [int(call(conn, "AddTask", {"title": subject})["structuredContent"]["id"])
           for subject in ("write the parser", "test the parser", "ship it", "tell the team")]
    call(conn, "block_todo", {"id": ids[1], "on": ids[0]})
    call(conn, "add_subtask", {"parent": ids[2], "subject": "tag the release"})
    call(conn, "claim_todo", {"id": ids[0]})
    call(conn, "finish_todo", {"id": ids[3]})
    # AgentScope's plan is a list of its own (its create_plan replaces the whole list)
    call(conn, "create_plan", {"name": "ship", "description": "ship it", "expected_outcome": "shipped", "subtasks": [
        {"name": "build", "description": "build it", "expected_outcome": "built"}]}, conversation="hints-plan")
    return ids


def read_args(ids):
    """The arguments each read-only tool needs to answer on the seeded list."""
    first, root = str(ids[0]), "/srv/hints"
    return {
        "get_tool_info": {"tool_name": "create"}, "show": {"issue_id": first},
        "TaskGet": {"taskId": first},
        "get_tasks": {"projectRoot": root},
        "next_task": {"projectRoot": root}, "validate_dependencies": {"projectRoot": root},
        "fix_dependencies": {"projectRoot": root}, "list_tags": {"projectRoot": root},
        "task_search": {"query": "parser"}, "task_view": {"id": f"task-{first}"},
        "task_check": {}, "view_subtasks": {"subtask_idx": [0]}, "get_task": {"id": first, "projectRoot": root},
    }


def test_read_only_tools_write_nothing(database):
    with connect() as conn:
        ids = seed_list(conn)
        tools = catalog(conn)
        check("every tool has the four hints, booleans",
              all(set(HINTS) <= set(t.get("annotations", {})) and
                  all(isinstance(t["annotations"][h], bool) for h in HINTS) for t in tools),
              [t["name"] for t in tools if set(HINTS) - set(t.get("annotations", {}))])
        check("no tool reaches outside the store (openWorldHint false)",
              not any(t["annotations"]["openWorldHint"] for t in tools))
        readers = [t for t in tools if t["annotations"]["readOnlyHint"]]
        writers = [t for t in tools if not t["annotations"]["readOnlyHint"]]
        check("some tools read only, and the rest may write", len(readers) >= 30 and len(writers) >= 40,
              (len(readers), len(writers)))
        check("a read-only tool is neither destructive nor anything but idempotent",
              all(not t["annotations"]["destructiveHint"] and t["annotations"]["idempotentHint"] for t in readers))
        args = read_args(ids)
        before = state(conn)
        failed, changed = [], []
        for t in readers:
            name = f"{t['_meta']['pg_todos/dialect']}/{t['name']}"
            plan = t["_meta"]["pg_todos/dialect"] == "agentscope"
            out = call(conn, name, args.get(t["name"], {}), conversation="hints-plan" if plan else "hints")
            if out.get("isError") and t["name"] not in MODEL_TOOLS:
                failed.append((name, out["content"][0]["text"][:200]))
            after = state(conn)
            if after != before:
                changed.append(name)
                before = after
        check("every read-only tool answered, no error", not failed, failed)
        check("no read-only tool changed a todo, an event or a dependency", not changed, changed)
        # the check can fail: a writer run the same way changes the state
        call(conn, "release_todo", {"id": ids[0]})
        check("a writer run the same way is seen changing the state", state(conn) != before)


def schema_run(ids):
    """Calls of every tool with an output schema, in the ways it is used (tool, arguments)."""
    return [
        ("create_todo", {"items": [{"title": "research", "agentType": "researcher"}, {"title": "draft"}]}),
        ("list_todo", {}), ("list_todo", {"status": "all"}),
        ("complete_todo", {"todoId": "{plan}", "outcome": "a table"}),
        ("complete_todo", {"todoId": "{plan2}", "outcome": "dropped", "status": "cancelled"}),
        ("list_todo", {"status": "completed"}),
        ("todolist__set", {"todos": [{"content": "build", "status": "in_progress", "activeForm": "building"},
                                     {"content": "test", "status": "pending", "activeForm": "testing"}]}),
        ("todolist__get", {}),
        ("todowrite", {"todos": [{"content": "write", "status": "pending", "priority": "high"}]}),
        ("todoread", {}),
        ("AddTask", {"title": "an API", "description": "GET /items"}), ("ListTasks", {}),
        ("CompleteTask", {"taskId": "{task}"}), ("UncompleteTask", {"taskId": "{task}"}),
        ("DeleteTask", {"taskId": "{task}"}),
        ("ready_todos", {}), ("ready_todos", {"limit": 1}),
        ("claim_todo", {"id": ids[2]}), ("heartbeat_todo", {"id": ids[2], "lease_seconds": 60}),
        ("release_todo", {"id": ids[2]}), ("claim_todo", {}), ("claim_todo", {}),
        ("block_todo", {"id": ids[2], "on": ids[1]}), ("block_todo", {"id": ids[2], "on": ids[1]}),
        ("unblock_todo", {"id": ids[2], "on": ids[1]}), ("unblock_todo", {"id": ids[2], "on": ids[1]}),
        ("add_subtask", {"parent": ids[1], "subject": "a fixture"}),
        ("finish_todo", {"id": ids[0], "outcome": "done"}),
    ]


def fill(args, found):
    return {k: found.get(v.strip("{}"), v) if isinstance(v, str) and v.startswith("{") else v
            for k, v in args.items()}


def remember(tool, out, found):
    s = out.get("structuredContent") or {}
    if tool == "create_todo":
        found["plan"], found["plan2"] = s["created"][0]["id"], s["created"][1]["id"]
    if tool == "AddTask":
        found["task"] = s["id"]


def test_output_schemas_hold(database):
    with connect() as conn:
        ids = seed_list(conn)
        schemas = {t["name"]: t["outputSchema"] for t in catalog(conn) if "outputSchema" in t}
        found, invalid, errors, called = {}, [], [], set()
        for tool, args in schema_run(ids):
            # the whole-list writers on a list of their own, which the seeded todos are not on
            whole = tool in ("todolist__set", "todolist__get", "todowrite", "todoread") or tool.endswith("Task") \
                or tool == "ListTasks"
            out = call(conn, tool, fill(args, found), conversation="hints-lists" if whole else "hints")
            called.add(tool)
            if out.get("isError"):
                errors.append((tool, out["content"][0]["text"][:200]))
                continue
            remember(tool, out, found)
            try:
                jsonschema.validate(out.get("structuredContent"), schemas[tool],
                                    cls=jsonschema.Draft202012Validator)
            except jsonschema.ValidationError as e:
                invalid.append((tool, e.message))
        check("the run calls every tool that has an output schema", set(schemas) <= called,
              sorted(set(schemas) - called))
        check("no call of the run was an error", not errors, errors)
        check("every answer fits its tool's output schema", not invalid, invalid)
        wrong = {"id": "7", "fence": 1}  # heartbeat_todo's id is a number, and its lease is missing
        check("a wrong answer does not fit", not jsonschema.Draft202012Validator(
            schemas["heartbeat_todo"]).is_valid(wrong))


def test_the_sdk_lists_and_checks_them(database):
    async def run():
        with connect() as conn:
            tools = {t["name"]: t for t in catalog(conn) if t["_meta"]["pg_todos/dialect"] == "coord"}
            ids = [int(call(conn, "AddTask", {"title": f"sdk {i}"}, conversation="sdk")["structuredContent"]["id"])
                   for i in (1, 2)]
        cwd = tempfile.mkdtemp(prefix="pg_todos_hints_")
        async with mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--tools", "coord", "--conversation", "sdk",
                                     cwd=cwd) as s:
            listed = {t.name: t for t in (await s.session.list_tools()).tools}
            same = all(listed[n].annotations.model_dump(by_alias=True, exclude_none=True) ==
                       {h: t["annotations"][h] for h in HINTS} and listed[n].output_schema == t["outputSchema"]
                       for n, t in tools.items())
            check("the SDK lists coord's annotations and output schemas as todo.tools() has them", same)
            answers = []
            for name, args in (("ready_todos", {}), ("claim_todo", {"id": ids[0]}),
                               ("heartbeat_todo", {"id": ids[0]}), ("block_todo", {"id": ids[1], "on": ids[0]}),
                               ("unblock_todo", {"id": ids[1], "on": ids[0]}),
                               ("add_subtask", {"parent": ids[1], "subject": "more"}),
                               ("release_todo", {"id": ids[0]}), ("claim_todo", {}),
                               ("finish_todo", {"id": ids[0]})):
                structured, is_error, text = await s.call(name, args)
                answers.append((name, is_error, structured is not None))
            check("each call passed the SDK's own check of its output schema, no error",
                  all(not e and has for _, e, has in answers), answers)
    asyncio.run(run())
