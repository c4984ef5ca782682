#!/usr/bin/env python3
"""tracker_numbers: the trackers' dialects never refuse a create for its id. Task Master's
`add_task` / `add_subtask` and Backlog.md's `task_create` (tasks and subtasks) number their
tasks from the store (todo.caller_numbers): 8 agents creating on one list at once all succeed
with distinct, consecutive ids; a list of 5,000 tasks (far past todo.max_read_todos) gets the
next number, and the numbers move past ids inserted or imported with their own numbers. Past
the read limit, Task Master's JSON answers (get_tasks, next_task) still parse, the cut said
inside them. A refusal names tasks by the tracker's ids, never the store's (`#2004`). Every
call runs as the plain role agent_login, through todo.call_mcp.

Sizes: PGTODOS_TRACKER_AGENTS=8x25 (agents x creates each), PGTODOS_TRACKER_BIG=5000.
"""
import json
import os
import re
import threading

import psycopg
import pytest
from psycopg.types.json import Jsonb

from checks import check

DB = "tracker_numbers"
AGENTS, EACH = (int(x) for x in os.environ.get("PGTODOS_TRACKER_AGENTS", "8x25").split("x"))
BIG = int(os.environ.get("PGTODOS_TRACKER_BIG", "5000"))


@pytest.fixture(scope="module", autouse=True)
def numbers_database(cluster):
    cluster.database(DB)


def new_tenant(name):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (name,))
    return name


def call(conn, tenant, conversation, agent, tool, args):
    """One tool call in its own transaction: (text, isError)."""
    with conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s, %s)", (tenant, conversation, agent))
        r = conn.execute("SELECT todo.call_mcp(%s, %s)", (tool, Jsonb(args))).fetchone()[0]
    return r["content"][0]["text"], r["isError"]


def connect():
    return psycopg.connect(dbname=DB, user="agent_login", autocommit=True)


def caller_ids(tenant, conversation):
    with connect() as conn, conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s)", (tenant, conversation))
        return [r[0] for r in conn.execute(
            "SELECT external_id FROM todo.todos WHERE conversation_id = %s ORDER BY id", (conversation,))]


def at_once(tenant, conversation, tool, args_of):
    """AGENTS agents, each on its own connection, each making EACH creates as fast as it can;
    the refusals' texts."""
    refusals, start = [], threading.Barrier(AGENTS)

    def agent(n):
        with connect() as conn:
            start.wait()
            for i in range(EACH):
                text, is_error = call(conn, tenant, conversation, f"agent-{n}", tool, args_of(n, i))
                if is_error:
                    refusals.append(text)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(AGENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return refusals


# (name, list, tool, arguments of agent n's i-th create, the ids made, a setup call)
CREATES = [
    ("taskmaster add_task", "project:/tm", "taskmaster/add_task",
     lambda n, i: {"projectRoot": "/tm", "title": f"task {n}.{i}", "description": "at once"},
     lambda k: [str(x) for x in range(1, k + 1)], None),
    ("taskmaster add_subtask", "project:/tms", "taskmaster/add_subtask",
     lambda n, i: {"projectRoot": "/tms", "id": "1", "title": f"sub {n}.{i}"},
     lambda k: ["1"] + [f"1.{x}" for x in range(1, k + 1)],
     ("taskmaster/add_task", {"projectRoot": "/tms", "title": "parent", "description": "of them all"})),
    ("backlog task_create", "project:/bl", "backlog/task_create",
     lambda n, i: {"title": f"task {n}.{i}"},
     lambda k: [f"TASK-{x}" for x in range(1, k + 1)], None),
    ("backlog subtask", "project:/bls", "backlog/task_create",
     lambda n, i: {"title": f"sub {n}.{i}", "parentTaskId": "TASK-1"},
     lambda k: ["TASK-1"] + [f"TASK-1.{x}" for x in range(1, k + 1)],
     ("backlog/task_create", {"title": "parent"})),
]


@pytest.mark.parametrize("name,conversation,tool,args_of,expected,setup", CREATES, ids=[c[0] for c in CREATES])
def test_agents_creating_at_once_are_never_refused(name, conversation, tool, args_of, expected, setup):
    tenant = new_tenant("at-once-" + re.sub(r"\W", "-", name))
    if setup:
        with connect() as conn:
            text, is_error = call(conn, tenant, conversation, "setup", *setup)
            check(f"{name}: the parent is made", not is_error, text)
    refusals = at_once(tenant, conversation, tool, args_of)
    total = AGENTS * EACH
    check(f"{name}: {AGENTS} agents at once, none of {total} creates refused", not refusals,
          f"{len(refusals)} refused, e.g. {refusals[:2]}")
    ids = caller_ids(tenant, conversation)
    check(f"{name}: every create made one task, each with its own id", len(ids) == len(set(ids)) == total + bool(setup),
          f"{len(ids)} tasks, {len(set(ids))} ids")
    check(f"{name}: the ids are the next numbers, none skipped", sorted(ids) == sorted(expected(total)),
          f"{sorted(ids)[:5]}… vs {expected(total)[:5]}…")


def fill(tenant, conversation, ids):
    """Inserts tasks with these caller ids in one plain-SQL INSERT (an app's import)."""
    with connect() as conn, conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s)", (tenant, conversation))
        conn.execute("INSERT INTO todo.todos (conversation_id, subject, external_id) "
                     "SELECT %s, 'task ' || x, x FROM unnest(%s::text[]) x", (conversation, ids))


def test_task_master_numbers_past_the_read_limit_and_answers_in_json():
    tenant, conversation = new_tenant("big-taskmaster"), "project:/big"
    fill(tenant, conversation, [str(i) for i in range(1, BIG + 1)])
    root = {"projectRoot": "/big"}
    with connect() as conn:
        text, is_error = call(conn, tenant, conversation, "a", "taskmaster/add_task",
                              {**root, "title": "one more", "description": "past the limit"})
        check(f"add_task on {BIG} tasks succeeds", not is_error, text)
        check(f"add_task on {BIG} tasks numbers it {BIG + 1}", f'"taskId": {BIG + 1}' in text, text[:300])
        text, is_error = call(conn, tenant, conversation, "a", "taskmaster/add_subtask",
                              {**root, "id": "1", "title": "a subtask"})
        check("add_subtask on a long list succeeds", not is_error and "New subtask 1.1 successfully created" in text,
              text[:300])
        # ids imported with their own numbers (a plain INSERT): the next create moves past them
        fill(tenant, conversation, [str(BIG + 100)])
        text, _ = call(conn, tenant, conversation, "a", "taskmaster/add_task",
                       {**root, "title": "after the import", "description": "moves past"})
        check("add_task after an import of a higher id moves past it", f'"taskId": {BIG + 101}' in text, text[:300])
        for tool in ("get_tasks", "next_task"):
            text, is_error = call(conn, tenant, conversation, "a", f"taskmaster/{tool}", root)
            try:
                answer = json.loads(text)
            except ValueError as e:
                answer = None
                check(f"{tool} past the read limit answers in JSON", False, f"{e}: …{text[-300:]}")
            else:
                check(f"{tool} past the read limit answers in JSON", True)
                check(f"{tool}'s JSON says how much it left out", "more todos not shown" in
                      str(answer.get("pg_todos/omitted")), str(answer)[-300:])


def test_backlog_numbers_past_the_read_limit():
    tenant, conversation = new_tenant("big-backlog"), "project:/bigbl"
    fill(tenant, conversation, [f"TASK-{i}" for i in range(1, BIG + 1)])
    with connect() as conn:
        text, is_error = call(conn, tenant, conversation, "a", "backlog/task_create", {"title": "one more"})
        check(f"task_create on {BIG} tasks succeeds", not is_error, text)
        check(f"task_create on {BIG} tasks numbers it TASK-{BIG + 1}", f"Task TASK-{BIG + 1} - one more" in text,
              text[:200])
        # an id imported in another case, past the counter
        fill(tenant, conversation, [f"task-{BIG + 50}"])
        text, _ = call(conn, tenant, conversation, "a", "backlog/task_create", {"title": "after the import"})
        check("task_create after an import of a higher id moves past it", f"Task TASK-{BIG + 51} - after the import" in text,
              text[:200])


def store_ids(tenant, conversation):
    with connect() as conn, conn.transaction():
        conn.execute("SELECT todo.set_context(%s, %s)", (tenant, conversation))
        return {str(r[0]) for r in conn.execute(
            "SELECT id FROM todo.todos WHERE conversation_id = %s AND external_id IS NOT NULL", (conversation,))}


def names_store_id(text, ids):
    return [i for i in re.findall(r"#(\d+)", text) if i in ids]


def test_refusals_name_tasks_by_the_trackers_ids():
    tenant = new_tenant("named")
    # store ids well apart from the trackers' numbers
    fill(tenant, "elsewhere", [f"x{i}" for i in range(50)])
    with connect() as conn:
        conv = "project:/named"
        call(conn, tenant, conv, "a", "backlog/task_create", {"title": "first"})
        text, _ = call(conn, tenant, conv, "a", "backlog/task_edit", {"id": "TASK-1", "status": "Done"})
        text, is_error = call(conn, tenant, conv, "a", "backlog/task_edit", {"id": "TASK-1", "status": "In Progress"})
        check("Backlog.md: a Done task set In Progress is reopened and claimed, as Backlog.md moves it",
              not is_error and "In Progress" in text, text[:300])
        check("Backlog.md: the answer names no store id", not names_store_id(text, store_ids(tenant, conv)), text[:300])
        # a task another agent holds: the refusal names it by its own id
        call(conn, tenant, conv, "a", "backlog/task_create", {"title": "second"})
        call(conn, tenant, conv, "a", "backlog/task_edit", {"id": "TASK-2", "status": "In Progress"})
        text, is_error = call(conn, tenant, conv, "b", "backlog/task_archive", {"id": "TASK-2"})
        check("Backlog.md: a refusal names no store id", not names_store_id(text, store_ids(tenant, conv)), text[:300])
        conv = "project:/named-tm"
        root = {"projectRoot": "/named-tm"}
        for title in ("one", "two"):
            call(conn, tenant, conv, "a", "taskmaster/add_task", {**root, "title": title, "description": "d"})
        call(conn, tenant, conv, "a", "taskmaster/set_task_status", {**root, "id": "1", "status": "in-progress"})
        for tool, args in (("remove_task", {"id": "1"}), ("update_subtask", {"id": "1.1", "prompt": "x"}),
                           ("set_task_status", {"id": "1", "status": "review"})):
            text, is_error = call(conn, tenant, conv, "b", f"taskmaster/{tool}", {**root, **args})
            check(f"Task Master {tool}: the answer names no store id",
                  not names_store_id(text, store_ids(tenant, conv)), text[:300])
        conv = "project:/named-bd"
        text, _ = call(conn, tenant, conv, "a", "beads/create", {"title": "one", "workspace_root": "/named-bd"})
        bid = (re.findall(r"bd-[0-9a-z]+", text) or [None])[0]
        check("beads: the issue is made", bid, text[:300])
        call(conn, tenant, conv, "a", "beads/claim", {"issue_id": bid, "workspace_root": "/named-bd"})
        for tool, args in (("update", {"issue_id": bid, "title": "renamed"}), ("close", {"issue_id": bid})):
            text, is_error = call(conn, tenant, conv, "b", f"beads/{tool}", {**args, "workspace_root": "/named-bd"})
            check(f"beads {tool}: the answer names no store id", not names_store_id(text, store_ids(tenant, conv)),
                  text[:300])
