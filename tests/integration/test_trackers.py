#!/usr/bin/env python3
"""trackers: the trackers' dialects answer as the trackers themselves do. Each scenario was
recorded from the tracker's own MCP server (fixtures/trackers/<tracker>-<version>.jsonl:
every call's arguments and the exact text it answered) and is replayed here, call by call in
the same order, through todo.call_mcp on a fresh tenant; each answer's text must be the
recorded one to the character, once times and dates are masked.

Where pg_todos answers otherwise on purpose, the call is listed in DIFFERS with the reason,
and its answer is not compared; one that the tracker refused and pg_todos would carry out is
not run at all (NOT_RUN), so that the calls after it find the tasks as the tracker left
them. A call the tracker never answered (its server exited) must be refused here. Besides times, two things of the recorded texts
are not compared, because they depend on which of Task Master's two writers last rewrote its
file rather than on the tasks: `updatedAt` (written by one of them) and `"parentId":
"undefined"` (a field that writer leaves on subtasks).

One tracker: bin/test-integration test_trackers.py -k taskmaster
"""
import json
import os
import pathlib
import re
import shutil
import subprocess

import psycopg
import pytest
from psycopg.types.json import Jsonb

from checks import check

DB = "trackers"
FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "trackers"


@pytest.fixture(scope="module", autouse=True)
def trackers_database(cluster):
    cluster.database(DB)


def mask(text):
    """A text with what differs from run to run masked: ISO times, en-US dates; and the two
    fields of Task Master's texts that depend on its file's last writer dropped."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", text)
    text = re.sub(r"\b\d{1,2}/\d{1,2}/\d{4}\b", "<date>", text)
    text = re.sub(r'\n *"(updatedAt": "<time>"|parentId": "undefined"),?(?=\n)', "", text)
    return re.sub(r",(\n *[}\]])", r"\1", text)


def replay(tracker, dialect, tenant, agent, differs, not_run=()):
    """Replays a recorded scenario; (calls compared, mismatches, the calls not compared)."""
    calls = [json.loads(line) for line in (FIXTURES / tracker).read_text().splitlines()]
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s)", (tenant,))
    compared, mismatches, skipped = 0, [], []
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as conn:
        for call in calls:
            if "tool" not in call:
                continue
            if call["n"] in not_run:
                skipped.append(call["n"])
                continue
            with conn.transaction():
                conn.execute("SELECT todo.set_context(%s, NULL, %s)", (tenant, agent))
                r = conn.execute(
                    "SELECT todo.call_mcp(%s, %s)", (f"{dialect}/{call['tool']}", Jsonb(call["arguments"]))
                ).fetchone()[0]
            got, got_error = r["content"][0]["text"], r["isError"]
            if call["n"] in differs:
                skipped.append(call["n"])
                continue
            if "no_response" in call:
                skipped.append(call["n"])
                if not got_error:
                    mismatches.append((call["n"], call["tool"], call["arguments"], "(an error)", got))
                continue
            if "rpc_error" in call:
                # FastMCP's refusal of arguments its schema does not take is a JSON-RPC error;
                # here, a tool error with the same words (the SDK's prefix aside)
                want, want_error = call["rpc_error"].removeprefix("MCP error -32602: "), True
            else:
                want, want_error = call["text"], call["isError"]
            compared += 1
            if mask(got) != mask(want) or got_error != want_error:
                mismatches.append((call["n"], call["tool"], call["arguments"], mask(want), mask(got)))
    return compared, mismatches, skipped


# Task Master 0.43.1: the calls pg_todos answers otherwise, on purpose.
TASKMASTER_DIFFERS = {
    36: "the ids come back as text: Task Master's set_task_status had rewritten its file with text ids; "
        "pg_todos keeps one form (numbers in get_task, text in get_tasks)",
    37: "update_subtask with a prompt: Task Master has a model write the note (no API key: refused); "
        "pg_todos appends the prompt's words as they are",
    38: "metadata: Task Master refuses it unless TASK_MASTER_ALLOW_METADATA_UPDATES=true; pg_todos takes it",
    39: "metadata and a prompt: as 37 and 38",
    40: "metadata that is not JSON: Task Master first says metadata is disabled (as 38)",
    42: "metadata that is not JSON: the words of each one's JSON parser",
    44: "a prompt with metadata: as 37",
    62: "the dependencies 42 and 1.9 that were written into Task Master's file by hand",
    90: "add_task with a prompt: Task Master calls a model; pg_todos runs none and says so",
    91: "as 90",
    92: "expand_task: pg_todos runs no model and says so (Task Master skips a task that has subtasks)",
    93: "as 92",
    94: "as 92",
    95: "as 92 (Task Master first finds no task 99)",
    97: "as 90",
    98: "as 90",
    99: "as 90",
    101: "research: as 90",
    102: "parse_prd: as 90 (Task Master first finds no PRD file)",
    103: "parse_prd: as 90 (Task Master first finds tasks in the tag)",
    104: "parse_prd: as 90",
    105: "parse_prd: as 90",
    106: "update_subtask with research: as 37 (Task Master fails inside)",
    110: "the schema's refusal: both refuse, in their own words for a missing id",
    113: "an unknown tool: the MCP server's error, not a tool's",
    114: "a projectRoot that is not a directory: Task Master cannot start there; pg_todos names a list by it",
    115: "a relative projectRoot: as 114",
}


# The calls of TASKMASTER_DIFFERS that Task Master refused and pg_todos carries out.
TASKMASTER_NOT_RUN = {37, 38, 39, 44, 106}


def test_taskmaster_answers_as_recorded():
    compared, mismatches, skipped = replay(
        "taskmaster-0.43.1.jsonl", "taskmaster", "tm-replay", "claude@s1", TASKMASTER_DIFFERS, TASKMASTER_NOT_RUN
    )
    for n, tool, args, want, got in mismatches[:40]:
        print(f"--- call {n} {tool} {args}\n--- Task Master:\n{want}\n--- pg_todos:\n{got}")
    check(
        f"Task Master's recorded scenario: {compared} answers the same to the character",
        not mismatches,
        f"{len(mismatches)} differ: {[m[0] for m in mismatches]}",
    )
    check(
        "the calls answered otherwise on purpose are the ones listed, each still an error or not as recorded",
        sorted(skipped) == sorted(set(TASKMASTER_DIFFERS) | {49, 50, 51, 52, 59}),
        f"skipped {sorted(skipped)}",
    )


def replay_texts(tracker, dialect, tenant, agent, conversation, differs, not_run=()):
    """Replays a recorded scenario whose answers are lists of texts (several content items);
    (calls compared, mismatches, the calls not compared)."""
    calls = [json.loads(line) for line in (FIXTURES / tracker).read_text().splitlines()]
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s)", (tenant,))
    compared, mismatches, skipped = 0, [], []
    minute = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as conn:
        for call in calls:
            if call["n"] in not_run:
                skipped.append(call["n"])
                continue
            with conn.transaction():
                conn.execute("SELECT todo.set_context(%s, %s, %s)", (tenant, conversation, agent))
                r = conn.execute(
                    "SELECT todo.call_mcp(%s, %s)", (f"{dialect}/{call['tool']}", Jsonb(call["arguments"]))
                ).fetchone()[0]
            if call["n"] in differs or "rpc_error" in call:
                skipped.append(call["n"])
                continue
            compared += 1
            got = [minute.sub("<time>", c["text"]) for c in r["content"]]
            want = [minute.sub("<time>", t) for t in call["texts"]]
            if got != want or bool(r["isError"]) != call["isError"]:
                mismatches.append((call["n"], call["tool"], call["arguments"], "\n=====\n".join(want), "\n=====\n".join(got)))
    return compared, mismatches, skipped


# Backlog.md 1.52.0: the calls pg_todos answers otherwise, on purpose.
BACKLOG_DIFFERS = {}


def test_backlog_answers_as_recorded():
    compared, mismatches, skipped = replay_texts(
        "backlog-1.52.0.jsonl", "backlog", "bl-replay", "claude@s1", "project:/tmp/bl_real/proj", BACKLOG_DIFFERS
    )
    for n, tool, args, want, got in mismatches[:40]:
        print(f"--- call {n} {tool} {args}\n--- Backlog.md:\n{want}\n--- pg_todos:\n{got}")
    check(
        f"Backlog.md's recorded scenario: {compared} answers the same to the character",
        not mismatches,
        f"{len(mismatches)} differ: {[m[0] for m in mismatches]}",
    )


@pytest.mark.parametrize("tracker,dialect", [("taskmaster-0.43.1", "taskmaster"), ("backlog-1.52.0", "backlog")])
def test_the_tools_are_listed_as_the_tracker_lists_them(tracker, dialect):
    """Each tool the dialect serves has the description and input schema the tracker's own
    server listed (fixtures/trackers/<tracker>-tools.json, recorded from its tools/list)."""
    recorded = json.loads((FIXTURES / f"{tracker}-tools.json").read_text())
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        catalog = conn.execute("SELECT todo.tools()").fetchone()[0]
    ours = {t["name"]: t for t in catalog if t["_meta"]["pg_todos/dialect"] == dialect}
    differ = [t["name"] for t in recorded
              if ours.get(t["name"], {}).get("description") != t["description"]
              or ours.get(t["name"], {}).get("inputSchema") != t["inputSchema"]]
    check(f"{dialect}: the {len(recorded)} tools it serves, each with the tracker's own description and schema",
          not differ and sorted(ours) == sorted(t["name"] for t in recorded), (differ, sorted(set(ours) ^ {t["name"] for t in recorded})))


# ---------- import and export: the trackers' own files, and their own programs reading ours ----------

CORE_FIXTURES = pathlib.Path(__file__).parents[2] / "core" / "src" / "formats" / "fixtures"
NODE_BIN = pathlib.Path(__file__).parents[1] / "trackers" / "node_modules" / ".bin"


def run_cli(cli, tenant, *args, check_rc=0):
    """`pg_todos <args>` as the app role agent_login; (stdout, stderr)."""
    env = {**os.environ, "PG_TODOS_TENANT": tenant, "PGDATABASE": DB, "PGUSER": "agent_login"}
    env.pop("PG_TODOS_CONVERSATION", None)
    r = subprocess.run([cli, *args], env=env, capture_output=True, text=True, timeout=120)
    if check_rc is not None:
        assert r.returncode == check_rc, f"pg_todos {' '.join(args)}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout, r.stderr


def new_tenant(name):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        conn.execute("INSERT INTO todo.tenants (tenant_id) VALUES (%s)", (name,))


def count_todos(tenant):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM todo.todos WHERE tenant_id = %s", (tenant,)).fetchone()[0]


def summary(out):
    return out.strip().splitlines()[-1]


def files_under(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def program(require, name, why):
    path = NODE_BIN / name
    require(path.exists(), f"{path} is missing ({why}): run bin/setup (npm ci in tests/trackers)")
    return str(path)


def test_backlog_files_come_back_as_they_were(cli, tmp_path, require):
    """Backlog.md's own files (13 tasks it wrote: subtasks, completed, archived, acceptance
    criteria, comments, due dates) imported, imported again (nothing changes), exported: every
    task file is the one Backlog.md wrote, byte for byte, and `backlog task list --plain` lists
    the exported project as it lists its own."""
    tenant = "backlog-files"
    new_tenant(tenant)
    project = tmp_path / "proj"
    shutil.copytree(CORE_FIXTURES / "backlog" / "end", project / "backlog")
    shutil.copy(FIXTURES / "backlog-config.yml", project / "backlog" / "config.yml")  # Backlog.md's, as it wrote it
    originals = {k: v for k, v in files_under(project).items() if k.endswith(".md")}
    out, _ = run_cli(cli, tenant, "import", "backlog", str(project), "--dry-run")
    check("backlog: a dry run says what it would add and writes nothing",
          summary(out) == f"dry run, nothing written: {len(originals)} added, 0 changed, 0 unchanged"
          and count_todos(tenant) == 0, out)
    out, _ = run_cli(cli, tenant, "import", "backlog", str(project))
    check(f"backlog: the {len(originals)} tasks added", summary(out) == f"{len(originals)} added, 0 changed, 0 unchanged", out)
    out, _ = run_cli(cli, tenant, "import", "backlog", str(project))
    check("backlog: importing the same files again changes nothing",
          summary(out) == f"0 added, 0 changed, {len(originals)} unchanged", out)
    exported = tmp_path / "exported"
    run_cli(cli, tenant, "export", "backlog", str(exported), "--list", f"project:{project.resolve()}")
    back = {k: v for k, v in files_under(exported).items() if k.endswith(".md")}
    differ = sorted(k for k in set(originals) | set(back) if originals.get(k) != back.get(k))
    check("backlog: every exported task file is the file Backlog.md wrote, byte for byte", not differ, differ)
    backlog = program(require, "backlog", "Backlog.md's own program")
    listed = [subprocess.run([backlog, "task", "list", "--plain"], cwd=d, capture_output=True, text=True, timeout=120)
              for d in (project, exported)]
    check("backlog: Backlog.md lists the exported project as its own",
          listed[0].stdout == listed[1].stdout and "TASK-1.1 - Subtask of DB" in listed[1].stdout,
          f"{listed[0].stdout}\n---\n{listed[1].stdout}\n{listed[1].stderr}")


def masked_listing(text):
    """Task Master's `list --format json` with what its file does not decide masked: the
    times a task without them gets on import, and the `parentId` its writer leaves."""
    start = text.index("{")
    data = json.loads(text[start:text.rindex("}") + 1])

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in ("createdAt", "updatedAt") and x != "undefined"}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    return clean(data["tasks"])


def test_taskmaster_files_come_back_as_task_master_lists_them(cli, tmp_path, require):
    """Task Master's own tasks.json (two tags, a subtask, metadata) imported, imported again
    (nothing changes), exported: Task Master lists the exported tags as it lists its own."""
    tenant = "taskmaster-files"
    new_tenant(tenant)
    project = tmp_path / "proj"
    (project / ".taskmaster" / "tasks").mkdir(parents=True)
    shutil.copy(CORE_FIXTURES / "taskmaster_two_tags.json", project / ".taskmaster" / "tasks" / "tasks.json")
    out, _ = run_cli(cli, tenant, "import", "taskmaster", str(project))
    check("taskmaster: the tasks of both tags added", summary(out) == "4 added, 0 changed, 0 unchanged", out)
    check("taskmaster: a tag other than master is the list <project>#<tag>",
          f"added 1 in project:{project.resolve()}#feature-x" in out, out)
    out, _ = run_cli(cli, tenant, "import", "taskmaster", str(project))
    check("taskmaster: importing the same file again changes nothing", summary(out) == "0 added, 0 changed, 4 unchanged", out)
    exported = tmp_path / "exported"
    run_cli(cli, tenant, "export", "taskmaster", str(exported), "--list", f"project:{project.resolve()}")
    tm = program(require, "task-master", "Task Master's own program")
    for tag in ("master", "feature-x"):
        listed = [subprocess.run([tm, "list", "--format", "json", "--with-subtasks", "--tag", tag], cwd=d,
                                 capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
                  for d in (project, exported)]
        mine, theirs = masked_listing(listed[1].stdout), masked_listing(listed[0].stdout)
        check(f"taskmaster: Task Master lists the exported tag {tag} as its own", mine == theirs and mine,
              f"{json.dumps(theirs, indent=1)}\n---\n{json.dumps(mine, indent=1)}")


def test_beads_and_claude_files_round_trip(cli, tmp_path):
    """beads' issues.jsonl (by its documented format) and Claude Code's todo and task files:
    imported twice (the second changes nothing), exported, imported from the export: the same
    records (checked by a third import of the exported files, which changes nothing)."""
    tenant = "other-files"
    new_tenant(tenant)
    project = tmp_path / "proj"
    (project / ".beads").mkdir(parents=True)
    shutil.copy(CORE_FIXTURES / "beads_issues.jsonl", project / ".beads" / "issues.jsonl")
    issues = sum(1 for line in (project / ".beads" / "issues.jsonl").read_text().splitlines() if line.strip())
    out, _ = run_cli(cli, tenant, "import", "beads", str(project))
    check(f"beads: the {issues} issues added", summary(out) == f"{issues} added, 0 changed, 0 unchanged", out)
    out, _ = run_cli(cli, tenant, "import", "beads", str(project))
    check("beads: importing again changes nothing", summary(out) == f"0 added, 0 changed, {issues} unchanged", out)
    exported = tmp_path / "exported"
    run_cli(cli, tenant, "export", "beads", str(exported), "--list", f"project:{project.resolve()}")
    out, _ = run_cli(cli, tenant, "import", "beads", str(exported), "--list", f"project:{project.resolve()}")
    check("beads: the exported file is the same issues", summary(out) == f"0 added, 0 changed, {issues} unchanged", out)

    todos = tmp_path / "claude" / "todos"
    todos.mkdir(parents=True)
    (todos / "s1-agent-s1.json").write_text(json.dumps([
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}], indent=2))
    out, _ = run_cli(cli, tenant, "import", "claude-todos", str(todos), "--list", "claude")
    check("claude-todos: the session's todos added to <list>#<file>",
          summary(out) == "3 added, 0 changed, 0 unchanged" and "in claude#s1-agent-s1" in out, out)
    back = tmp_path / "claude-export"
    run_cli(cli, tenant, "export", "claude-todos", str(back), "--list", "claude")
    exported_todos = json.loads((back / "todos" / "s1-agent-s1.json").read_text())
    check("claude-todos: exported as Claude Code writes them", exported_todos == json.loads((todos / "s1-agent-s1.json").read_text()),
          exported_todos)


def test_a_bad_file_names_what_to_fix_and_writes_nothing(cli, tmp_path):
    tenant = "bad-files"
    new_tenant(tenant)
    project = tmp_path / "proj"
    (project / ".taskmaster" / "tasks").mkdir(parents=True)
    good = json.loads((CORE_FIXTURES / "taskmaster_two_tags.json").read_text())
    good["master"]["tasks"][1]["status"] = "finished"
    (project / ".taskmaster" / "tasks" / "tasks.json").write_text(json.dumps(good, indent=2))
    out, err = run_cli(cli, tenant, "import", "taskmaster", str(project), check_rc=1)
    check("a bad status: the error names the file, the field and what to write",
          ".taskmaster/tasks/tasks.json" in err and "master.tasks[1].status" in err and "pending" in err
          and "22P02" in err, err)
    check("a bad file: nothing written", count_todos(tenant) == 0)
    (project / ".taskmaster" / "tasks" / "tasks.json").write_text('{"master": {"tasks": [\n  {"id": 1,,}\n]}}')
    out, err = run_cli(cli, tenant, "import", "taskmaster", str(project), check_rc=1)
    check("JSON that does not parse: the error names its line", "line 2" in err, err)
    out, err = run_cli(cli, tenant, "import", "trello", str(project), check_rc=1)
    check("an unknown format is named, with the ones there are", "unknown format" in err and "backlog" in err, err)
