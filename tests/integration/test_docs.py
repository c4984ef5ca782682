#!/usr/bin/env python3
"""The docs test: every SQL example in README.md and docs/*.md runs, and shows what it prints.

Every page runs on a cluster of this module's own (roles the pages create do not meet other
tests'), with PGTZ=UTC. One page: bin/test-integration test_docs.py -k writ.md

The contract (the pages' authors write to it):

- Pages: README.md and docs/*.md (sorted), or the pages named on the command line. Each page
  runs in a fresh database on the same cluster, all of its blocks fed in order to ONE psql
  session (`psql -X -q -v ON_ERROR_STOP=0`, as superuser postgres, reading stdin, stderr
  merged into stdout). After the page, its database is dropped, with every role and
  database the page created, so pages do not leak into each other.
- Every fenced block whose info string is `sql` runs, unless the line just before its
  opening fence is exactly `<!-- not run -->` (signatures, fragments). Other blocks (sh,
  bash, json, text not after sql, ...) do not run.
- An `sql` block followed (only blank lines between) by a fenced `text` block is a pair: the
  block's output must equal the text block. An `sql` block with no `text` block after it must
  print nothing at all (a setup block), so an error cannot pass unseen.
- A block must end its last statement (`;` or a backslash command): the query buffer is
  reset after every block, so an unterminated statement would never run.
- Output and text are compared line by line, after stripping `psql:<stdin>:N: ` prefixes,
  trailing whitespace and trailing empty lines, and after normalizing in both:
    timestamps (2026-11-22T15:51:16.015077+00:00, 2026-11-22 15:51:16.015+00, ...Z) -> <time>
    UUIDs -> <uuid>; bearer token secrets (pgt_ and 64 hex digits) -> <token>
    epoch seconds (10 digits, 2020s-2030s: the REST shape's stamps) -> <epoch>
    a quoted pg_snapshot cursor ("748:750:748") -> <snapshot>; "PID 1234" -> "PID <pid>"
    runs of spaces -> one space; runs of dashes in psql's rule lines ("----+----",
    "-[ RECORD 1 ]----") -> one dash (a timestamp's width varies, and with it the table's)
  so a text block may hold either the real values or the placeholders.
- One test per page; one check per sql block: `ok: <page> block <n> (line <l>)` or
  `FAILED: <page> block <n> (line <l>)` with a short unified diff, n counting the page's sql
  blocks that run.
- `PGTODOS_DOCS_ACCEPT=<page> bin/test-integration test_docs.py` (pages separated by spaces,
  or `all`) rewrites each pair's text block of those pages with the actual output, inserts a
  text block after an sql block that printed something but had none, and removes the text
  block of a block that now prints nothing. Read what it wrote before committing it.
"""
import difflib
import os
import re
import subprocess
import uuid

import pytest

import pg
from checks import check

REPO = pg.REPO
NOT_RUN = "<!-- not run -->"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")

NORMALIZE = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?"), "<time>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\bpgt_[0-9a-f]{64}\b"), "<token>"),
    (re.compile(r"\b(?:1[6-9]|2[0-1])\d{8}\b"), "<epoch>"),
    (re.compile(r'(?<=")\d+:\d+:[0-9,]*(?=")'), "<snapshot>"),
    (re.compile(r"\bPID \d+"), "PID <pid>"),
]
PSQL_PREFIX = re.compile(r"^psql:<stdin>:\d+: ", re.M)
RULE = re.compile(r"^(?:[-+]+|-\[ RECORD \d+ \]-*[-+]*)$")


class Block:
    def __init__(self, info, indent, fence, start, end, body):
        self.info = info          # first word of the info string
        self.indent = indent      # the opening fence's indentation
        self.fence = fence        # the opening fence itself (``` or ~~~~ ...)
        self.start = start        # index of the opening fence line
        self.end = end            # index of the closing fence line (len(lines) if none)
        self.body = body          # the lines between, indentation removed


def parse(lines):
    """Fenced blocks of a markdown page, as CommonMark reads them (a closing fence: the same
    character, at least as long, nothing after it)."""
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        info = m["info"].strip().split()[0] if m["info"].strip() else ""
        j = i + 1
        while j < len(lines):
            c = FENCE.match(lines[j])
            if c and c["fence"][0] == fence[0] and len(c["fence"]) >= len(fence) and not c["info"].strip():
                break
            j += 1
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j]]
        blocks.append(Block(info, indent, fence, i, j, body))
        i = j + 1
    return blocks


def runnable(lines, blocks):
    """(sql block, its text block or None) for every sql block that runs."""
    out = []
    for k, b in enumerate(blocks):
        if b.info != "sql" or (b.start > 0 and lines[b.start - 1].strip() == NOT_RUN):
            continue
        text = None
        if k + 1 < len(blocks) and blocks[k + 1].info == "text":
            between = lines[b.end + 1:blocks[k + 1].start]
            if all(not line.strip() for line in between):
                text = blocks[k + 1]
        out.append((b, text))
    return out


def ends_its_statement(body):
    code = [line for line in body if line.strip() and not line.strip().startswith("--")]
    if not code:
        return True
    last = re.sub(r"--[^'\"]*$", "", code[-1]).rstrip()  # a trailing comment (none in a string)
    return last.endswith(";") or re.search(r"(^|\s)\\[A-Za-z!?]", last) is not None


def psql(db, script=None, *args):
    return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=0", "-d", db, *args],
                          input=script, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=600).stdout


def names(kind):
    query = {"roles": "SELECT rolname FROM pg_roles", "dbs": "SELECT datname FROM pg_database"}[kind]
    return set(psql("postgres", None, "-At", "-c", query).split("\n")) - {""}


def quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def run_page(page, pairs):
    """Runs a page's sql blocks in one session; returns each block's output lines."""
    db = "docs_" + re.sub(r"[^a-z0-9]+", "_", page.lower()).strip("_")
    roles, dbs = names("roles"), names("dbs")
    psql("postgres", None, "-c", f"DROP DATABASE IF EXISTS {quote_ident(db)} WITH (FORCE)")
    out = psql("postgres", None, "-c", f"CREATE DATABASE {quote_ident(db)}")
    if out.strip():
        raise RuntimeError(f"cannot create database {db}: {out}")
    mark = f"@@docs-{uuid.uuid4().hex}@@"
    script = []
    for n, (b, _) in enumerate(pairs, 1):
        script.append(f"\\echo {mark} {n}")
        script.extend(b.body)
        script.append("\\r")
    script.append(f"\\echo {mark} end")
    try:
        raw = psql(db, "\n".join(script) + "\n")
    finally:
        psql("postgres", None, "-c", f"DROP DATABASE IF EXISTS {quote_ident(db)} WITH (FORCE)")
        for d in sorted(names("dbs") - dbs):
            psql("postgres", None, "-c", f"DROP DATABASE IF EXISTS {quote_ident(d)} WITH (FORCE)")
        for r in sorted(names("roles") - roles):
            left = psql("postgres", None, "-c", f"DROP ROLE IF EXISTS {quote_ident(r)}")
            if left.strip():
                print(f"warning: {page}: could not drop role {r}: {left.strip()}")
    raw = PSQL_PREFIX.sub("", raw)
    parts = re.split(rf"^{re.escape(mark)} (\d+|end)\n", raw, flags=re.M)
    outputs = {}
    if parts[0].strip():
        outputs[0] = parts[0]
    for label, text in zip(parts[1::2], parts[2::2]):
        if label != "end":
            outputs[int(label)] = text
        elif text.strip():
            outputs[len(pairs)] = outputs.get(len(pairs), "") + text
    return [clean(outputs.get(n, "").split("\n")) for n in range(1, len(pairs) + 1)], outputs.get(0)


def clean(lines):
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def normalize(lines, squeeze=True):
    out = []
    for line in lines:
        for pattern, repl in NORMALIZE:
            line = pattern.sub(repl, line)
        if squeeze:
            line = re.sub(r"-{2,}", "-", line) if RULE.match(line) else line
            line = re.sub(r" {2,}", " ", line).rstrip()
        out.append(line)
    return out


def fence_for(body, char="`"):
    longest = max([len(m.group(0)) for line in body for m in [re.match(r"\s*(`+|~+)", line)] if m] + [2])
    return char * max(3, longest + 1)


def accept(path, lines, changes):
    """changes: (sql block, text block or None, actual lines), in page order."""
    for b, text, actual in sorted(changes, key=lambda c: c[0].start, reverse=True):
        if text is not None and not actual:
            del lines[b.end + 1:text.end + 1]
        elif text is not None:
            fence = text.fence if len(text.fence) >= len(fence_for(actual)) else fence_for(actual)
            lines[text.start:text.end + 1] = ([text.indent + fence + "text"] +
                                              [(text.indent + a).rstrip() for a in actual] + [text.indent + fence])
        elif actual:
            fence = fence_for(actual)
            lines[b.end + 1:b.end + 1] = ([b.indent + fence + "text"] +
                                          [(b.indent + a).rstrip() for a in actual] + [b.indent + fence])
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def pages():
    """README.md and docs/*.md that have sql blocks to run."""
    docs = os.path.join(REPO, "docs")
    found = []
    for page in ["README.md"] + sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md")):
        with open(os.path.join(REPO, page)) as f:
            lines = f.read().split("\n")
        if runnable(lines, parse(lines)):
            found.append(page)
    return found


@pytest.fixture(scope="module", autouse=True)
def docs_cluster(cluster):
    saved = os.environ.get("PGTZ")
    os.environ["PGTZ"] = "UTC"
    with pg.own_cluster("docs") as c:
        yield c
    if saved is None:
        os.environ.pop("PGTZ", None)
    else:
        os.environ["PGTZ"] = saved


@pytest.mark.parametrize("page", pages())
def test_every_sql_example_prints_what_the_page_shows(page):
    wanted = os.environ.get("PGTODOS_DOCS_ACCEPT", "").split()
    accepting = "all" in wanted or page in wanted
    path = os.path.join(REPO, page)
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pairs = runnable(lines, parse(lines))
    outputs, stray = run_page(page, pairs)
    if stray:
        check(f"{page}: no output before the first block", False, stray.strip())
    changes = []
    for n, ((b, text), actual) in enumerate(zip(pairs, outputs), 1):
        where = f"{page} block {n} (line {b.start + 1})"
        expected = clean(text.body) if text else []
        problem = None
        if not ends_its_statement(b.body):
            problem = ["the block does not end its last statement (no ';'): it would never run"]
        elif normalize(expected) != normalize(actual):
            diff = list(difflib.unified_diff(normalize(expected, False), normalize(actual, False),
                                             "expected" if text else "expected (no text block: no output)",
                                             "actual", lineterm="", n=2))
            problem = diff[:40] + (["  ..."] if len(diff) > 40 else [])
        if problem is not None and accepting and problem[0].startswith("---"):
            changes.append((b, text, actual))
            print(f"accepted: {where}")
            problem = None
        check(where, problem is None, "\n" + "\n".join("    " + line for line in problem or []))
    if changes:
        accept(path, lines, changes)


# docs/tools.md's table of dialects is todo.dialects(), row for row, between these lines
TABLE_START, TABLE_END = "<!-- dialects: todo.dialects(), checked by test_docs.py -->", "<!-- /dialects -->"


def dialect_table(conn):
    """The markdown table of the dialects, rendered from todo.dialects()."""
    rows = conn.execute("SELECT name, aliases, runtime, description, tools, list_shape FROM todo.dialects()").fetchall()
    out = ["| dialect | runtime | tools | what they do | `todo.list_as` shape |", "|---|---|---|---|---|"]
    for name, aliases, runtime, description, tools, shape in rows:
        also = "".join(f" (`{a}`)" for a in aliases)
        names = ", ".join(f"`{t}`" for t in tools)
        out.append(f"| `{name}`{also} | {runtime} | {names} | {description} | {shape or '–'} |")
    return out


def test_the_dialect_table_is_the_registry(docs_cluster):
    """docs/tools.md's dialect table lists what todo.dialects() does; with
    PGTODOS_DOCS_ACCEPT=docs/tools.md (or all) it is rewritten from it."""
    path = os.path.join(REPO, "docs/tools.md")
    with open(path) as f:
        lines = f.read().split("\n")
    check("docs/tools.md has the dialect table's markers", TABLE_START in lines and TABLE_END in lines)
    start, end = lines.index(TABLE_START), lines.index(TABLE_END)
    db = "docs_dialects"
    docs_cluster.database(db)
    with docs_cluster.connect(db) as conn:
        want = dialect_table(conn)
    docs_cluster.psql(f"DROP DATABASE {db}")
    accepting = {"all", "docs/tools.md"} & set(os.environ.get("PGTODOS_DOCS_ACCEPT", "").split())
    if accepting and lines[start + 1:end] != want:
        lines[start + 1:end] = want
        with open(path, "w") as f:
            f.write("\n".join(lines))
        print("accepted: docs/tools.md's dialect table")
        return
    diff = list(difflib.unified_diff(lines[start + 1:end], want, "docs/tools.md", "todo.dialects()", lineterm="", n=0))
    check("docs/tools.md's dialect table is todo.dialects(), row for row", not diff, "\n" + "\n".join(diff[:40]))


def test_the_tracker_formats_table_is_the_list_of_formats(docs_cluster):
    """docs/tools.md's table of trackers' files names, in order, the formats of
    TRACKER_FORMATS (core/src/formats/trackers.rs), as todo.import's error for an unknown
    format lists them."""
    path = os.path.join(REPO, "docs/tools.md")
    with open(path) as f:
        text = f.read()
    section = text.split("## Trackers' files: import and export", 1)[-1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z-]+)` \|", section, re.M)
    db = "docs_formats"
    docs_cluster.database(db)
    with docs_cluster.connect(db) as conn:
        try:
            conn.execute("SELECT todo.import('no-such-format', '{}'::jsonb)")
            hint = ""
        except Exception as e:  # the unknown format's error, its hint listing the formats
            hint = getattr(getattr(e, "diag", None), "message_hint", "") or ""
    docs_cluster.psql(f"DROP DATABASE {db}")
    known = hint.removeprefix("use one of ").split(", ") if hint.startswith("use one of ") else []
    check("todo.import's unknown format error lists the formats", len(known) >= 5, hint)
    check("docs/tools.md's table of trackers' files names the formats todo.import knows, in order",
          documented == known, f"documented {documented}, known {known}")
