#!/usr/bin/env python3
"""The board as an MCP App (SEP-1865; docs/mcp.md, "The board in the chat (MCP App)"), tested as
hosts run it, over both transports (`pg_todos mcp` over stdio, `/mcp` of `pg_todos serve`):

  - the declarations, raw JSON-RPC: `initialize` declares the extension
    `io.modelcontextprotocol/ui` with `text/html;profile=mcp-app`; tools/list gives
    `_meta.ui.resourceUri` = `ui://pg_todos/board` on exactly the list-reading tools
    (`SHOWN_BY`), each tool otherwise as `todo.tools()` lists it; a server kept to one dialect
    names it on that dialect's list read only; the built-in catalog (the database away) names
    it too; resources/list lists the page; resources/read gives one content of
    `text/html;profile=mcp-app` with its CSP (no domain) and the connection's list;
  - the app in a host (app_host.py: a page in headless Chromium whose script is the official
    ext-apps SDK's AppBridge, which lists the tools, reads the page a tool names, calls the
    tool, mounts the page in `<iframe sandbox="allow-scripts">` by srcdoc under the declared
    CSP and forwards the app's tools/call and resources/read to the server): the app shows
    the todos plain SQL wrote; a todo SQL adds shows without a reload; claim, release and finish
    through the app change the database (finish: completed, its event by the connection's
    agent); a todo added in the app is on the list; a subject holding HTML shows as text; a
    theme change reaches it; it tells the host its size; after the host's teardown it reads no
    more; a server kept to claude-tasks answers the app's finish with unknown_tool, which it
    shows, and the board turns read-only.
Needs /usr/bin/chromium, /usr/bin/chromedriver and tests/mcp_app's packages (bin/setup).
PGTODOS_APP_SCREENSHOT=/tmp/app.png saves the host with the app as /tmp/app-http.png and
/tmp/app-stdio.png.
"""
import os
import tempfile
import time

import psycopg
import pytest
from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException,
                                        NoSuchFrameException, StaleElementReferenceException)
from selenium.webdriver.common.by import By

import app_host
import checks
import web
from chromium import chromium
from checks import check

DB = "mcp_app"
BOARD = "ui://pg_todos/board"
MIME = "text/html;profile=mcp-app"
# the tools that name the page, as cli/src/mcp/app.rs declares them
SHOWN_BY = {"plan/list_todo", "opencode/todoread", "todolist/todolist__get", "tasks/ListTasks", "coord/ready_todos",
            "claude-tasks/TaskList", "pydantic-ai/read_todos", "mastra/task_check", "beads/list", "beads/ready",
            "taskmaster/get_tasks", "backlog/task_list"}
SERVER = SRV = SCRIPT = None


@pytest.fixture(scope="module", autouse=True)
def app_service(cluster, cli):
    global SERVER, SRV
    SERVER = cli
    with web.serving(cluster, cli, DB) as SRV:
        yield


@pytest.fixture(scope="module")
def host_script():
    """The host's script, bundled once for the module's browser tests."""
    global SCRIPT
    checks.need(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"),
                "Debian's chromium and chromium-driver (bin/setup installs them)")
    checks.need(app_host.installed(), "tests/mcp_app's packages: bin/setup (npm ci in tests/mcp_app)")
    SCRIPT = app_host.bundle(tempfile.mkdtemp(prefix="pg_todos_mcp_app_"))
    return SCRIPT


def project(name):
    return os.path.realpath(tempfile.mkdtemp(prefix=f"pg_todos_app_{name}_"))


def stdio(*args, **env):
    return app_host.Stdio(SERVER, DB, "--tenant", "acme", *args, cwd=project("stdio"), **env)


def http(query, label="mcp-app"):
    _, tok = web.token(DB, "acme", label)
    return app_host.Http(f"http://{web.HOST}:{SRV.port}/mcp?{query}", tok)


def sql(list_id, statement, params=(), agent="sql-writer"):
    """One transaction as agent_login in tenant acme and list `list_id`; its rows."""
    with psycopg.connect(dbname=DB, user="agent_login") as c:
        c.execute("SELECT todo.set_context('acme', %s, %s)", (list_id, agent))
        cur = c.execute(statement, params)
        return cur.fetchall() if cur.description else []


def add(list_id, subject):
    return sql(list_id, "INSERT INTO todo.todos (subject) VALUES (%s) RETURNING id", (subject,))[0][0]


def state_of(todo_id):
    return sql(None, "SELECT status, claimed_by FROM todo.todos WHERE id = %s", (todo_id,))[0]


def last_event(todo_id):
    return sql(None, "SELECT agent_id, new_status FROM todo.events WHERE todo_id = %s ORDER BY version DESC LIMIT 1",
               (todo_id,))[0]


# ---- the declarations ----------------------------------------------------------------------

def qualified(tool):
    return f'{tool["_meta"]["pg_todos/dialect"]}/{tool["name"]}'


def the_declarations(name, connection, list_uri, extension_tools):
    """The checks of one connection (`name`) whose list's URI is `list_uri`."""
    caps = connection.initialized["result"]["capabilities"]
    check(f"{name}: initialize declares io.modelcontextprotocol/ui",
          caps.get("extensions", {}).get(app_host.UI) == {"mimeTypes": [MIME]}, caps)
    tools = connection.request("tools/list", {})["result"]["tools"]
    showing = {qualified(t) for t in tools if t.get("_meta", {}).get("ui") == {"resourceUri": BOARD}}
    check(f"{name}: tools/list names the page on exactly the list-reading tools", showing == SHOWN_BY,
          sorted(showing ^ SHOWN_BY))
    listed_as = {qualified(t): t for t in extension_tools}
    changed = [qualified(t) for t in tools if {k: v for k, v in t.items() if k != "_meta"}
               != {k: v for k, v in listed_as[qualified(t)].items() if k != "_meta"}
               or {k: v for k, v in t["_meta"].items() if k != "ui"} != listed_as[qualified(t)]["_meta"]]
    check(f"{name}: every tool is otherwise as todo.tools() lists it", not changed and len(tools) > 90, changed)
    listed = connection.request("resources/list", {})["result"]["resources"]
    page = [r for r in listed if r["uri"] == BOARD]
    check(f"{name}: resources/list lists the page", [r["uri"] for r in listed][-1] == BOARD and page
          and page[0]["mimeType"] == MIME, listed)
    contents = connection.request("resources/read", {"uri": BOARD})["result"]["contents"]
    meta = contents[0].get("_meta", {}).get("ui", {}) if contents else {}
    check(f"{name}: resources/read gives the page, {MIME}, with its CSP (no domain)",
          len(contents) == 1 and contents[0]["mimeType"] == MIME and contents[0]["uri"] == BOARD
          and meta.get("csp") == {"connectDomains": [], "resourceDomains": []}
          and contents[0]["text"].startswith("<!DOCTYPE html>"), (contents[0]["mimeType"], meta))
    check(f"{name}: the page shows the connection's list", f'"uri":"{list_uri}"' in contents[0]["text"],
          contents[0]["text"][-300:])


def test_the_declarations_over_both_transports():
    with psycopg.connect(dbname=DB, user="postgres") as c:
        extension_tools = c.execute("SELECT todo.tools()").fetchone()[0]
    s = stdio("--conversation", "declared")
    try:
        the_declarations("stdio", s, "todo://list/declared", extension_tools)
    finally:
        s.close()
    h = http("list=declared%20http")
    the_declarations("http", h, "todo://list/declared%20http", extension_tools)
    for name, kept in (("stdio", stdio("--tools", "claude-tasks")), ("http", http("tools=claude-tasks"))):
        try:
            tools = kept.request("tools/list", {})["result"]["tools"]
            showing = [t["name"] for t in tools if t.get("_meta", {}).get("ui")]
            check(f"{name}, kept to claude-tasks: the page is named on TaskList only", showing == ["TaskList"], showing)
        finally:
            kept.close()
    page = http("").request("resources/read", {"uri": BOARD})["result"]["contents"][0]["text"]
    check("http without a list: the page shows the tenant-wide pool", '{"list":null,"uri":"todo://pool",' in page)


def test_the_built_in_catalog_names_the_page_too():
    # a socket directory with no server in it: the database is away at start
    away = stdio("--tools", "coord,plan", PGHOST=tempfile.mkdtemp(prefix="pg_todos_no_server_"))
    try:
        tools = away.request("tools/list", {})["result"]["tools"]
        showing = sorted(qualified(t) for t in tools if t.get("_meta", {}).get("ui", {}).get("resourceUri") == BOARD)
        check("the database away: the built-in catalog's list reads name the page", showing
              == ["coord/ready_todos", "plan/list_todo"] and len(tools) == 11, (showing, len(tools)))
        read = away.request("resources/read", {"uri": BOARD})
        check("the database away: the page is read all the same", read.get("result", {}).get("contents", [{}])[0]
              .get("mimeType") == MIME, read)
    finally:
        away.close()


# ---- the app in a host ---------------------------------------------------------------------

def browser():
    return chromium("--window-size=1000,900")


def wait_for(what, fn, timeout=8.0, interval=0.1):
    """fn's first truthy answer within timeout seconds; a stale element, a missing element or
    frame counts as not yet."""
    end = time.monotonic() + timeout
    last = None
    while True:
        try:
            got = fn()
            if got:
                return got
            last = got
        except (StaleElementReferenceException, LookupError, NoSuchFrameException) as e:
            last = e
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {timeout:g} s (last: {last!r})")
        time.sleep(interval)


def step(name, fn):
    """One check that fails when fn raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - every failure is reported and counted
        check(name, False, f"{type(e).__name__}: {e}")
    else:
        check(name, True)


def host_state(d):
    d.switch_to.default_content()
    return d.execute_script("return window.hostState")


def in_app(d):
    """The driver, switched into the app's iframe."""
    d.switch_to.default_content()
    frames = d.find_elements(By.CSS_SELECTOR, "#chat iframe")
    if not frames:
        raise LookupError("no app iframe yet")
    d.switch_to.frame(frames[0])
    return d


def rows(d):
    """{id: (status, subject)} of the todos the app shows."""
    return {int(li.get_attribute("data-todo-id")): (li.get_attribute("data-status"),
                                                     li.find_element(By.CSS_SELECTOR, ".subject").text)
            for li in in_app(d).find_elements(By.CSS_SELECTOR, "li[data-todo-id]")}


def notice(d):
    return in_app(d).find_element(By.ID, "notice").text


def click(d, todo_id, act):
    """Clicks a todo's button in the app (looked up again when a re-render replaced it)."""
    def go():
        found = in_app(d).find_elements(By.CSS_SELECTOR, f'li[data-todo-id="{todo_id}"] button[data-act="{act}"]')
        if not found:
            raise LookupError(f"#{todo_id} has no {act} button")
        try:
            found[0].click()
        except (ElementNotInteractableException, ElementClickInterceptedException):
            return False
        return True
    wait_for(f"click {act} on #{todo_id}", go)


def open_host(d, connection, query=""):
    host = app_host.Host(connection, SCRIPT)
    d.get(host.url + query)
    state = wait_for("the app initialized", lambda: (lambda s: s if s and (s["initialized"] or s["error"]) else None)(
        host_state(d)), timeout=20)
    if state["error"]:
        raise AssertionError("the host failed: " + state["error"])
    return host, state


def the_app_shows_and_acts(d, name, connection, list_id, agent_of):
    """The whole scenario on one connection whose list is `list_id`; `agent_of(agent_id)` says
    whether an event is the connection's agent's."""
    first, second = add(list_id, "Write the migration"), add(list_id, "Review the schema")
    html = "<img src=x onerror=\"document.body.dataset.pwned='1'\"> & </script>"
    shady = add(list_id, html)
    host, state = open_host(d, connection)
    try:
        check(f"{name}: the host found the page on the list reads, as the app's handshake said",
              state["resource"]["uri"] == BOARD and state["resource"]["mimeType"] == MIME
              and state["app"]["name"] == "pg_todos board" and state["shownBy"], state)
        step(f"{name}: the app shows the todos plain SQL wrote", lambda: wait_for("rows", lambda: {
            first, second, shady} <= set(rows(d)) and rows(d)[first] == ("pending", "Write the migration")))
        step(f"{name}: a subject holding HTML shows as text, and runs nothing", lambda: wait_for(
            "text", lambda: rows(d)[shady][1] == html and not in_app(d).find_elements(By.TAG_NAME, "img")
            and d.execute_script("return document.body.dataset.pwned") is None))
        later = add(list_id, "Added while the board is shown")
        step(f"{name}: a todo SQL adds shows without a reload", lambda: wait_for(
            "the new row", lambda: rows(d).get(later) == ("pending", "Added while the board is shown")))
        click(d, first, "claim")
        step(f"{name}: claim in the app claims the todo", lambda: wait_for(
            "claimed", lambda: state_of(first)[0] == "in_progress" and agent_of(state_of(first)[1])
            and rows(d)[first][0] == "in_progress"))
        click(d, first, "release")
        step(f"{name}: release in the app gives it back", lambda: wait_for(
            "released", lambda: state_of(first) == ("pending", None) and rows(d)[first][0] == "pending"))
        click(d, second, "finish")
        step(f"{name}: finish in the app completes the todo, its event by the connection's agent", lambda: wait_for(
            "finished", lambda: state_of(second)[0] == "completed" and last_event(second)[1] == "completed"
            and agent_of(last_event(second)[0]) and rows(d)[second][0] == "completed"))
        the_app_adds_and_follows_the_host(d, name, host, list_id)
    finally:
        host.close()


def the_app_adds_and_follows_the_host(d, name, host, list_id):
    field = in_app(d).find_element(By.ID, "subject")
    field.send_keys("Added in the app")
    in_app(d).find_element(By.ID, "add-button").click()
    step(f"{name}: a todo added in the app is on the list (the tasks dialect's AddTask)", lambda: wait_for(
        "added", lambda: sql(list_id, "SELECT count(*) FROM todo.todos WHERE subject = 'Added in the app' "
                                      "AND conversation_id = %s", (list_id,))[0][0] == 1
        and "Added in the app" in [s for _, s in rows(d).values()]))
    d.switch_to.default_content()
    if os.environ.get("PGTODOS_APP_SCREENSHOT"):
        d.save_screenshot(os.environ["PGTODOS_APP_SCREENSHOT"].replace(".png", f"-{name}.png"))
    d.execute_script("window.hostTheme('dark')")
    step(f"{name}: a theme change reaches the app", lambda: wait_for(
        "dark", lambda: in_app(d).execute_script("return document.documentElement.dataset.theme") == "dark"))
    size = host_state(d)["size"]
    height = d.execute_script("return document.querySelector('#chat iframe').style.height")
    check(f"{name}: the app tells the host its size, which fits the iframe to it",
          size and size["height"] > 100 and height == f'{size["height"]}px', (size, height))
    reads = len(host.app_calls("resources/read"))
    check(f"{name}: the app reads the list again and again (every 2 s)", reads >= 3, reads)
    d.execute_script("return window.hostTeardown()")
    step(f"{name}: the app answers the host's teardown", lambda: wait_for(
        "teardown", lambda: host_state(d)["teardown"] == {}))
    done = len(host.app_calls("resources/read"))
    time.sleep(5)  # two and a half refresh periods: a read would have come
    check(f"{name}: after the teardown the app reads no more", len(host.app_calls("resources/read")) == done,
          len(host.app_calls("resources/read")) - done)


def the_read_only_board(d, connection, list_id):
    todo = add(list_id, "Only to look at")
    host, _ = open_host(d, connection)
    try:
        step("kept to claude-tasks: the app shows the list", lambda: wait_for(
            "rows", lambda: rows(d).get(todo) == ("pending", "Only to look at")))
        click(d, todo, "finish")
        step("kept to claude-tasks: finish answers unknown_tool, which the app shows, its buttons off",
             lambda: wait_for("the message", lambda: 'unknown tool "finish_todo"' in notice(d)
                              and "buttons are off" in notice(d)
                              and not in_app(d).find_elements(By.CSS_SELECTOR, "button[data-act]")))
        in_app(d).find_element(By.ID, "subject").send_keys("Not to be added\n")
        step("kept to claude-tasks: adding answers unknown_tool too, and the board is read-only", lambda: wait_for(
            "read-only", lambda: 'unknown tool "AddTask"' in notice(d) and "read-only" in notice(d)
            and not in_app(d).find_element(By.ID, "add").is_displayed()))
        calls = host.app_calls("tools/call")
        check("kept to claude-tasks: the calls reached the server, which refused them, and nothing changed",
              [p["name"] for p, _ in calls] == ["finish_todo", "AddTask"]
              and all(a["result"]["structuredContent"]["error"]["code"] == "unknown_tool" for _, a in calls)
              and state_of(todo) == ("pending", None)
              and sql(list_id, "SELECT count(*) FROM todo.todos WHERE subject = 'Not to be added'")[0][0] == 0, calls)
    finally:
        host.close()


def test_the_app_in_a_host_over_http(host_script):
    d = browser()
    try:
        the_app_shows_and_acts(d, "http", http("list=app-http"), "app-http", lambda agent: agent == "mcp-app")
        the_read_only_board(d, http("list=app-read-only&tools=claude-tasks"), "app-read-only")
    finally:
        d.quit()


def test_the_app_in_a_host_over_stdio(host_script):
    d = browser()
    try:
        the_app_shows_and_acts(d, "stdio", stdio("--conversation", "app-stdio"), "app-stdio",
                               lambda agent: bool(agent) and agent.startswith("mcp-app-host@mcp-"))
    finally:
        d.quit()
