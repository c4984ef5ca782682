#!/usr/bin/env python3
"""openapi: the service's OpenAPI 3.1 description against the running service.
  1. GET /openapi.json (no token) is cli/assets/openapi.json, as JSON;
  2. it is OpenAPI 3.1.0 and names every route the service answers (a request to a path it
     does not name is 404);
  3. schemathesis runs every documented operation but /v1/events and /mcp with a token of
     tenant acme (examples, coverage and fuzzing phases, 100 examples each, deterministic),
     all of its checks: no 5xx, no undocumented status, content type, header or body, requests
     the document forbids refused, requests it allows accepted (the bulk PATCH, whose items
     are any objects reported one by one, with every check but the last two);
     The board's changes (/v1/board/act) are fuzzed once more with a person's token, whose
     changes they are: no 5xx, every answer as documented;
  4. afterwards the service still answers and tenant globex has no todo (the fuzzer's writes
     stayed in acme).
schemathesis keeps its state in .schemathesis/ of the directory it runs in (git ignores it).
"""
import json
import os
import subprocess

import psycopg

import pg
import web
from checks import check
from web import HOST

DB = "openapi"
REPO = pg.REPO
ROUTES = ["/v1/todos", "/v1/todos/{id}", "/session/{id}/todo", "/v1/board", "/v1/board/page", "/v1/board/changes", "/v1/board/search",
          "/v1/board/act", "/v1/board/todos/{id}",
          "/v1/events", "/mcp", "/healthz", "/readyz", "/openapi.json", "/register"]


def test_the_openapi_document_describes_the_service(cluster, serve):
    cluster.database(DB, tenants=["acme", "globex"])
    srv = serve(DB)
    _, acme = web.token(DB, "acme", "fuzzer")

    def request(method, path, tok=None):
        return web.request(method, path, tok=tok, port=srv.port)

    def admin():
        return psycopg.connect(dbname=DB, user="postgres", autocommit=True)

    status, headers, served, _ = request("GET", "/openapi.json")
    with open(os.path.join(REPO, "cli/assets/openapi.json")) as f:
        document = json.load(f)
    check("GET /openapi.json without a token is the document, as application/json",
          status == 200 and headers.get("content-type") == "application/json" and served == document,
          (status, headers.get("content-type")))
    check("it is OpenAPI 3.1.0", document.get("openapi") == "3.1.0", document.get("openapi"))
    check("it names every route of the service", sorted(document["paths"]) == sorted(ROUTES), sorted(document["paths"]))
    check("a path it does not name is 404", request("GET", "/v2/todos", tok=acme)[0] == 404)
    base = ["schemathesis", "run", f"http://{HOST}:{srv.port}/openapi.json", "--header", f"Authorization: Bearer {acme}",
            "--exclude-path", "/v1/events", "--exclude-path", "/mcp", "--phases", "examples,coverage,fuzzing",
            "--max-examples", "100", "--request-timeout", "10", "--generation-deterministic", "--no-color"]
    # the bulk PATCH applies each item on its own and reports an invalid one in its results
    # (200), and refuses a body nested deeper than 32 levels whole: its item schema is any
    # object, so the checks of what the schema allows or forbids do not apply to it
    # The board's cursor and a list's place (since, after) follow rules a pattern cannot say
    # (a snapshot's xmin at most its xmax, its running transactions ascending between them): a
    # value the pattern allows may be refused (400), so they are fuzzed with the bulk PATCH.
    loose = ["changeTodos", "boardPage", "boardChanges"]
    runs = [("every operation but the bulk PATCH and the board's later reads, all checks",
             [a for o in loose for a in ("--exclude-operation-id", o)] + ["--checks", "all"]),
            ("the bulk PATCH and the board's later reads: no 5xx, statuses, headers, content types and bodies as documented",
             [a for o in loose for a in ("--include-operation-id", o)] + ["--checks",
              "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
              "response_headers_conformance"])]
    # the board's changes with a person's token (the fuzzer's is an agent's: 403 to every one):
    # whatever the action, an answer the document names, never a 5xx
    _, person = web.token(DB, "acme", "fuzzing-person", person=True)
    as_person = [a if a != f"Authorization: Bearer {acme}" else f"Authorization: Bearer {person}" for a in base]
    runs.append(("the board's changes as a person: no 5xx, statuses, content types and bodies as documented",
                 ["--include-operation-id", "boardAct", "--checks",
                  "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"]))
    for what, extra in runs:
        cmd = (as_person if "as a person" in what else base) + extra
        fuzz = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
        out = fuzz.stdout + fuzz.stderr
        tail = out[out.find("FAILURES"):] if "FAILURES" in out else out[-1500:]
        check(f"schemathesis, {what} (exit status 0)", fuzz.returncode == 0, tail[:6000])
        summary_line = [l for l in out.splitlines() if "generated" in l]
        print("   ", summary_line[-1].strip() if summary_line else "(no summary)")
    check("the service still answers", request("GET", "/healthz")[0] == 200)
    with admin() as c:
        leaked = c.execute("SELECT count(*) FROM todo.todos WHERE tenant_id = 'globex'").fetchone()[0]
    check("the fuzzer's writes stayed in its tenant (globex has none)", leaked == 0, leaked)
    check("no internal error in the service's log", "internal error" not in srv.logtext(),
          [l for l in srv.logtext().splitlines() if "internal error" in l][:5])
