#!/usr/bin/env python3
"""tasks: waiting claims as MCP tasks (docs/mcp.md, "Waiting claims as tasks"; the Tasks
extension, io.modelcontextprotocol/tasks, SEP-2663), spoken as raw JSON-RPC (the Python SDK
has no client side of the extension), as the plain role agent_login:
  - over stdio, a client that declares the extension: `initialize` names it; coord's
    claim_todo with wait_seconds and nothing ready answers a task (resultType "task", status
    working) whose row is in todo.claim_waits before the reply; tasks/get says working; a
    todo added by plain SQL is then claimed by the next tasks/get, for the agent that asked
    (completed, the claim's result as the task's result); with a todo ready the call answers
    the claim at once (no task); tasks/cancel ends a wait (a todo added after stays
    unclaimed); a wait of 1 s completes with {"claimed": false} once its deadline passed;
    tasks/update is -32602; an unknown task is -32602 with data.taskId;
  - a client without the extension: the same call is one synchronous try, and nothing is
    stored;
  - over HTTP (/mcp, the capability in the request's _meta): a waiting claim outlives a restart
    of the service: started, the service stopped, a todo added, a new service on the same
    port completes it at the next tasks/get; another tenant's token does not find the task;
  - in SQL: todo.claim_wait refuses a missing wait (22023), NULL arguments (22004), and an
    agent's 101st working wait (54000, naming the limit).
"""
import json
import os
import subprocess
import tempfile
import time

import psycopg
import pytest

import web
from checks import check

DB = "tasks"
SERVER = SRV = None
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.fixture(scope="module", autouse=True)
def tasks_service(cluster, cli):
    global SERVER, SRV
    SERVER = cli
    with web.serving(cluster, cli, DB, tenants=("acme", "other")) as SRV:
        yield


def sql(query, args=(), list_id=None, agent="sql-writer", tenant="acme"):
    """One statement in a transaction of agent_login, in context; its rows."""
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c, c.transaction():
        c.execute("SELECT todo.set_context(%s, %s, %s)", (tenant, list_id, agent))
        cur = c.execute(query, args)
        return cur.fetchall() if cur.description else []


def admin(query, args=()):
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as c:
        return c.execute(query, args).fetchall()


def add(list_id, subject):
    return sql("SELECT (todo.rest('POST', '/v1/todos', %s::jsonb)->'body'->'todo'->>'id')::bigint",
               (json.dumps({"subject": subject}),), list_id)[0][0]


class Stdio:
    """A `pg_todos mcp` process spoken to in raw JSON-RPC lines."""

    def __init__(self, list_id, capabilities):
        cwd = os.path.realpath(tempfile.mkdtemp(prefix="pg_todos_tasks_"))
        self.proc = subprocess.Popen([SERVER, "mcp", "--tenant", "acme", "--tools", "coord", "--conversation", list_id],
                                     env=web.libpq_env(DB), cwd=cwd, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.init = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                                                "clientInfo": {"name": "tasks-test", "version": "1"}})
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("pg_todos mcp closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def close(self):
        self.proc.stdin.close()
        web.stop(self.proc)


def claim_row(todo_id):
    return admin("SELECT status, claimed_by FROM todo.todos WHERE id = %s", (todo_id,))[0]


def test_a_waiting_claim_over_stdio():
    s = Stdio("waits-stdio", TASKS)
    try:
        ext = s.init["result"]["capabilities"].get("extensions", {})
        check("initialize names the Tasks extension", "io.modelcontextprotocol/tasks" in ext, s.init)
        r = s.request("tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 60}})["result"]
        task_id = r.get("taskId")
        stored = admin("SELECT status, conversation_id, agent FROM todo.claim_waits WHERE wait_id::text = %s",
                       (task_id or "",))
        check("nothing ready: claim_todo with wait_seconds answers a task, stored before the reply",
              r.get("resultType") == "task" and r.get("status") == "working" and r.get("pollIntervalMs") == 1000
              and len(stored) == 1 and stored[0][:2] == ("working", "waits-stdio"), (r, stored))
        agent = stored[0][2] if stored else None
        got = s.request("tasks/get", {"taskId": task_id})["result"]
        check("tasks/get: still working while nothing is ready", got["status"] == "working", got)
        todo = add("waits-stdio", "ready at last")
        got = s.request("tasks/get", {"taskId": task_id})["result"]
        result = got.get("result", {})
        check("a todo added by plain SQL is claimed by the next tasks/get, for the agent that asked",
              got["status"] == "completed" and result.get("structuredContent", {}).get("id") == todo
              and result["structuredContent"]["claimed"] is True and claim_row(todo) == ("in_progress", agent),
              (got, claim_row(todo), agent))
        again = s.request("tasks/get", {"taskId": task_id})["result"]
        check("a completed task keeps its result", again.get("result") == result and again["status"] == "completed",
              again)

        ready = add("waits-stdio", "ready now")
        r = s.request("tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 60}})["result"]
        check("with a todo ready, the claim is answered at once (no task)",
              "taskId" not in r and r.get("structuredContent", {}).get("id") == ready, r)

        r = s.request("tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 60}})["result"]
        s.request("tasks/cancel", {"taskId": r["taskId"]})
        late = add("waits-stdio", "added after the cancel")
        got = s.request("tasks/get", {"taskId": r["taskId"]})["result"]
        check("tasks/cancel ends the wait: cancelled, and a todo added after stays unclaimed",
              got["status"] == "cancelled" and claim_row(late) == ("pending", None), (got, claim_row(late)))
        sql("SELECT todo.finish(%s, NULL, 'canceled')", (late,), "waits-stdio", agent)

        r = s.request("tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 1}})["result"]
        time.sleep(1.2)
        got = s.request("tasks/get", {"taskId": r["taskId"]})["result"]
        check("past its deadline a wait completes with {claimed: false}",
              got["status"] == "completed" and got["result"]["structuredContent"] == {"claimed": False}, got)

        upd = s.request("tasks/update", {"taskId": r["taskId"], "inputResponses": {}})
        check("tasks/update is -32602 (a waiting claim asks for no input)",
              upd.get("error", {}).get("code") == -32602, upd)
        unknown = s.request("tasks/get", {"taskId": "00000000-0000-4000-8000-000000000000"})
        check("an unknown task is -32602 with data.taskId",
              unknown.get("error", {}).get("code") == -32602
              and unknown["error"].get("data") == {"taskId": "00000000-0000-4000-8000-000000000000"}, unknown)
        bad = s.request("tasks/get", {"taskId": "not-a-uuid"})
        check("a task id that is no UUID is unknown too", bad.get("error", {}).get("code") == -32602, bad)
    finally:
        s.close()


def test_without_the_extension_a_claim_is_one_try():
    s = Stdio("waits-plain", {})
    try:
        before = admin("SELECT count(*) FROM todo.claim_waits")[0][0]
        r = s.request("tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 60}})["result"]
        after = admin("SELECT count(*) FROM todo.claim_waits")[0][0]
        check("a client without the Tasks extension: one synchronous try, nothing stored",
              "taskId" not in r and r.get("structuredContent") == {"claimed": False} and before == after, r)
    finally:
        s.close()


def post(port, tok, method, params, list_id="waits-http"):
    meta = {"io.modelcontextprotocol/clientCapabilities": TASKS}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    status, _, answer, _ = web.request("POST", f"/mcp?list={list_id}&tools=coord", body, tok, port=port,
                                       headers={"Accept": "application/json, text/event-stream",
                                                "MCP-Protocol-Version": "2025-11-25"})
    return status, answer


def test_a_waiting_claim_outlives_a_restart_of_the_service():
    global SRV
    _, acme = web.token(DB, "acme", "tasks-acme")
    _, other = web.token(DB, "other", "tasks-other")
    status, r = post(SRV.port, acme, "tools/call", {"name": "claim_todo", "arguments": {"wait_seconds": 120}})
    task = r.get("result", {}) if isinstance(r, dict) else {}
    check("over /mcp, with the capability in the request's _meta: a task", status == 200 and task.get("status") == "working",
          (status, r))
    port = SRV.port
    SRV.stop()
    todo = add("waits-http", "added while the service was down")
    SRV = web.Server(SERVER, DB, port=port)
    status, r = post(port, acme, "tasks/get", {"taskId": task.get("taskId")})
    got = r.get("result", {}) if isinstance(r, dict) else {}
    check("after a restart of the service, tasks/get completes the wait with the todo added meanwhile",
          got.get("status") == "completed" and got["result"]["structuredContent"].get("id") == todo
          and claim_row(todo)[0] == "in_progress", (status, r))
    status, r = post(port, other, "tasks/get", {"taskId": task.get("taskId")})
    check("another tenant's token does not find the task (-32602)",
          isinstance(r, dict) and r.get("error", {}).get("code") == -32602, (status, r))


def test_the_sql_functions_refuse_what_they_cannot_do():
    def sqlstate(query, args=()):
        try:
            sql(query, args, "waits-sql", "sql-waiter")
            return None, None
        except psycopg.Error as e:
            return e.sqlstate, e.diag.message_primary
    check("no wait_seconds: 22023", sqlstate("SELECT todo.claim_wait('{}')")[0] == "22023")
    check("NULL arguments: 22004", sqlstate("SELECT todo.claim_wait(NULL)")[0] == "22004")
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c, c.transaction():
        c.execute("SELECT todo.set_context('acme', 'waits-sql', 'sql-waiter')")
        for _ in range(100):
            c.execute("SELECT todo.claim_wait('{\"wait_seconds\": 600}')")
    code, message = sqlstate("SELECT todo.claim_wait('{\"wait_seconds\": 600}')")
    check("an agent's 101st working wait: 54000 naming the limit",
          code == "54000" and "limit of waiting claims per agent" in (message or ""), (code, message))
    code, message = sqlstate("SELECT count(*) FROM todo.claim_waits")
    check("agent_login (granted as an app) cannot read todo.claim_waits itself: 42501", code == "42501",
          (code, message))
