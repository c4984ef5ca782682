#!/usr/bin/env python3
"""context_cost: what each surface costs a model in context before it does anything, in bytes
and in estimated tokens (bytes / 4, a rule of thumb for English and JSON; no tokenizer is
used), against a database with the extension. Prints a Markdown table.

- Each dialect (a row of `todo.dialects()`, in its order): its tools of `todo.tools()` (those
  whose `_meta."pg_todos/dialect"` is the dialect) as one compact JSON array (UTF-8, no
  spaces), the way an MCP server lists them in `tools/list` (`pg_todos mcp --tools <dialect>`);
  and the part of it a client typically hands the model (each tool's `name`, `description`
  and `inputSchema`: no `_meta`, annotations or output schema).
- Every dialect at once (`pg_todos mcp` without `--tools`): each name once, as the first
  dialect in the catalog's order has it (as the server lists them).
- The writ: the instruction text a model is given to use `/todo` lines from a shell, the fenced
  block after the line `<!-- the writ's instruction text -->` in docs/writ.md; and the answer
  of `/todo help` (every verb), which a model reads only when it asks for it.

Usage: bench/context_cost.py DBNAME TENANT   (libpq's environment names the server and role)
"""
import json
import os
import sys

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = "<!-- the writ's instruction text -->"
SEEN_BY_MODEL = ("name", "description", "inputSchema")


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def instruction_text():
    """The fenced block right after MARKER in docs/writ.md (its lines, without the fences)."""
    lines = open(os.path.join(REPO, "docs", "writ.md"), encoding="utf-8").read().split("\n")
    start = lines.index(MARKER) + 1
    while not lines[start].startswith("```"):
        start += 1
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start + 1:end]) + "\n"


def row(what, tools, full, seen):
    tokens = lambda n: f"≈ {round(n / 4):,}"  # noqa: E731
    return (f"| {what} | {tools} | {len(full):,} | {tokens(len(full))} | {len(seen):,} | {tokens(len(seen))} |")


def main(db, tenant):
    with psycopg.connect(dbname=db, autocommit=True) as c:
        with c.transaction():
            c.execute("SELECT todo.set_context(%s, 'context-cost', 'bench')", (tenant,))
            catalog = c.execute("SELECT todo.tools()").fetchone()[0]
            dialects = [r[0] for r in c.execute("SELECT name FROM todo.dialects()")]
            help_text = c.execute("SELECT todo.todo_writ('/todo help')").fetchone()[0]
            version = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'").fetchone()[0]
    seen = lambda tools: compact([{k: t[k] for k in SEEN_BY_MODEL if k in t} for t in tools])  # noqa: E731
    print(f"pg_todos {version}: bytes of UTF-8 text; tokens estimated as bytes / 4\n")
    print("| surface | tools | `tools/list` bytes | tokens | name, description, inputSchema bytes | tokens |")
    print("|---|--:|--:|--:|--:|--:|")
    for d in dialects:
        tools = [t for t in catalog if t.get("_meta", {}).get("pg_todos/dialect") == d]
        print(row(f"MCP `--tools {d}`", len(tools), compact(tools), seen(tools)))
    names, every = set(), []
    for t in catalog:
        if t["name"] not in names:
            names.add(t["name"])
            every.append(t)
    print(row("MCP, every dialect (no `--tools`)", len(every), compact(every), seen(every)))
    text = instruction_text().encode()
    print(row("writ from a shell: the instruction text (docs/writ.md)", "–", text, text))
    block = help_text.encode()
    print(row("writ: the answer of `/todo help` (read when asked)", "–", block, block))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(sys.argv[1], sys.argv[2])
