#!/usr/bin/env python3
"""prompts: the MCP server's prompts (`plan`, `standup`, `handoff`: docs/mcp.md, "Prompts"),
through the official MCP Python SDK, as the plain role agent_login, over stdio and over
Streamable HTTP:
  - prompts/list names the three with a title, a description and their arguments, the same on
    both transports;
  - plan gives one user message naming the task and the list; standup the list as it is now,
    by what each todo is doing (done, in progress with its owner, blocked on what, next), after
    writes through the tools; handoff the list's open block for the agent named, and says so
    when nothing is open;
  - an unknown prompt, a missing required argument and an argument the prompt does not have
    are MCP errors -32602 that say what to fix, and write nothing; so is standup on a
    connection with no list (the tenant-wide pool), saying how to name one.
"""
import asyncio
import tempfile

import pytest
from mcp.shared.exceptions import MCPError

import mcp_session
import web
from checks import check

DB = "prompts"
SERVER = SRV = None


@pytest.fixture(scope="module", autouse=True)
def prompts_service(cluster, cli):
    global SERVER, SRV
    SERVER = cli
    with web.serving(cluster, cli, DB) as SRV:
        yield


def text_of(result):
    return "\n".join(m.content.text for m in result.messages if m.content.type == "text")


async def error_of(session, name, args):
    try:
        await session.session.get_prompt(name, args)
        return None
    except MCPError as e:
        return e.error.code, e.error.message


async def prompts_of(s, listing):
    """The checks on one session of the list `standup-<transport>`."""
    listed = (await s.session.list_prompts()).prompts
    shape = [(p.name, bool(p.title), bool(p.description), [(a.name, bool(a.required)) for a in p.arguments or []])
             for p in listed]
    listing.append(shape)
    check("prompts/list: plan, standup and handoff, each titled and described, with their arguments",
          shape == [("plan", True, True, [("task", True)]), ("standup", True, True, []),
                    ("handoff", True, True, [("agent", False)])], shape)
    plan = await s.session.get_prompt("plan", {"task": "Ship the parser fix"})
    check("plan: one user message naming the task and the list",
          len(plan.messages) == 1 and plan.messages[0].role == "user" and "Ship the parser fix" in text_of(plan)
          and "standup-" in text_of(plan), text_of(plan))
    empty = await s.session.get_prompt("handoff", {"agent": "tester"})
    check("handoff on an empty list: says nothing is open", "Nothing is open on the list" in text_of(empty)
          and "as tester" in text_of(empty), text_of(empty))
    ids = []
    for subject in ("Read the issue", "Fix the parser", "Release"):
        created, _, _ = await s.call("TaskCreate", {"subject": subject, "description": subject})
        ids.append(created["task"]["id"])
    await s.call("TaskUpdate", {"taskId": ids[0], "status": "completed"})
    await s.call("TaskUpdate", {"taskId": ids[1], "status": "in_progress", "owner": "claude@s1"})
    await s.call("TaskUpdate", {"taskId": ids[2], "addBlockedBy": [ids[1]]})
    return listed


async def ids_of(s):
    got, _, _ = await s.call("TaskList", {})
    return [t["id"] for t in got["tasks"]]


async def standup_and_handoff(s, transport):
    ids = await ids_of(s)
    up = text_of(await s.session.get_prompt("standup", {}))
    done, doing, blocked = ids[0], ids[1], ids[2]
    check(f"{transport}: standup sorts the list: done, in progress with its owner, blocked on what",
          f"Done:\n- #{done} Read the issue" in up and f"In progress:\n- #{doing} Fix the parser (claude@s1)" in up
          and f"Blocked:\n- #{blocked} Release (waiting for #{doing})" in up and "has 3 todos" in up, up)
    hand = text_of(await s.session.get_prompt("handoff", {"agent": "tester"}))
    check(f"{transport}: handoff carries the open block", "Open todos" in hand and "Fix the parser" in hand
          and "Read the issue" not in hand, hand)
    errors = [await error_of(s, "nope", {}), await error_of(s, "plan", {}),
              await error_of(s, "plan", {"task": "x", "steps": "3"})]
    check(f"{transport}: an unknown prompt, a missing and an unknown argument are -32602 saying what to fix",
          [e and e[0] for e in errors] == [-32602] * 3 and "prompts/list" in errors[0][1]
          and 'needs the argument "task"' in errors[1][1] and 'no argument "steps"' in errors[2][1], errors)
    check(f"{transport}: the refused prompts wrote nothing", await ids_of(s) == ids)


def test_prompts_over_stdio_and_http():
    async def run():
        listing = []
        cwd = tempfile.mkdtemp(prefix="pg_todos_prompts_")
        async with mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--tools", "claude-tasks",
                                     "--conversation", "standup-stdio", cwd=cwd) as s:
            await prompts_of(s, listing)
            await standup_and_handoff(s, "stdio")
        _, tok = web.token(DB, "acme", "prompts")
        url = f"http://{web.HOST}:{SRV.port}/mcp?list=standup-http&tools=claude-tasks"
        async with mcp_session.Http(url, tok) as s:
            await prompts_of(s, listing)
            await standup_and_handoff(s, "http")
        check("the same prompts over both transports", listing[0] == listing[1])
        async with mcp_session.Http(f"http://{web.HOST}:{SRV.port}/mcp?tools=claude-tasks", tok) as s:
            err = await error_of(s, "standup", {})
            hand = text_of(await s.session.get_prompt("handoff", {}))
        check("no list (the tenant-wide pool): standup is -32602 saying how to name one",
              err and err[0] == -32602 and "?list=" in err[1], err)
        check("no list: handoff hands over the pool", "the tenant-wide pool" in hand, hand)
    asyncio.run(run())
