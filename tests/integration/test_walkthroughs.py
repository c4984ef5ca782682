#!/usr/bin/env python3
"""The walkthroughs: a page's setup section, followed literally as a new user would, from an
empty cluster. Its shell blocks run in one bash session, in order (so what one exports, the next
sees, and a service started in the background keeps running); its Python blocks run with that
session's environment; its SQL blocks are typed into the interactive psql a shell block opened.
So the commands the page shows cannot drift from what works.

One walkthrough: bin/test-integration test_walkthroughs.py -k agents

The contract (the pages' authors write to it):

- A walkthrough is a section of a page (from its heading to the next heading, of any level),
  listed in WALKTHROUGHS with the walkthroughs it continues from (those run first, in
  the same session).
- Blocks: ```sh runs in bash (`bash --norc`, stderr merged into stdout, the repository as the
  working directory); its exit status must be 0. A shell block whose last line is `psql …`
  without -c, -f or input opens an interactive psql: the ```sql blocks after it are typed into
  it (psql -X -q -v ON_ERROR_STOP=0, the same arguments). ```python runs as `python3 -` in the
  session's environment. A block after `<!-- not run -->` does not run (a client this machine
  does not have); other blocks (json, text alone, toml, ...) do not run.
- A block followed (only blank lines between) by a ```text block must print exactly that
  (compared as test_docs.py compares: timestamps, UUIDs, tokens, ... normalized); a block with
  none may print anything.
- What a test machine must change, and nothing else: the demo's cluster `demo 54315` is a
  cluster of the test's own (`bin/cluster`, a free port); the service's port 8787 is a free
  port; `pg_todos` is this build's command (first on the PATH); `xdg-open URL` records the URL,
  which the test then opens in Chromium (headless) and checks the page that opened.
- One check per block: `ok: <page> § <section> block <n> (line <l>)`.
"""
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import uuid

import pytest

import pg
from checks import check
from test_docs import NOT_RUN, clean, normalize, parse

REPO = pg.REPO

# (page, section heading, the walkthroughs it continues from)
WALKTHROUGHS = {
    "agents": ("docs/agents.md", "Quick start: from an empty database to an agent's tool call", []),
    "board": ("docs/board.md", "Opening it", ["agents"]),
    "readme": ("README.md", "Quick tour", []),
}
RUN = {"sh", "sql", "python"}


def section(page, heading):
    """The section's lines (heading included) and the line number of its heading."""
    with open(os.path.join(REPO, page)) as f:
        lines = f.read().split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"^#+ ", line) and line.lstrip("#").strip() == heading]
    assert starts, f"{page}: no heading {heading!r}"
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^#+ ", lines[i])), len(lines))
    return lines[start:end], start


def steps(page, heading):
    """(block, its text block or None, its line in the page) for every block that runs."""
    lines, offset = section(page, heading)
    blocks = parse(lines)
    out = []
    for k, b in enumerate(blocks):
        if b.info not in RUN or (b.start > 0 and lines[b.start - 1].strip() == NOT_RUN):
            continue
        text = None
        if k + 1 < len(blocks) and blocks[k + 1].info == "text" \
                and all(not line.strip() for line in lines[b.end + 1:blocks[k + 1].start]):
            text = blocks[k + 1]
        out.append((b, text, offset + b.start + 1))
    return out


class Lines:
    """A process's output, line by line, readable with a timeout."""

    def __init__(self, stream):
        self.q = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in iter(stream.readline, ""):
            self.q.put(line)
        self.q.put(None)

    def until(self, mark, timeout):
        """The lines before the one starting with `mark`, and the rest of that line."""
        got = []
        while True:
            try:
                line = self.q.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError("no end of block within %d s; so far:\n%s" % (timeout, "".join(got)))
            if line is None:
                raise EOFError("the session ended; its output:\n" + "".join(got))
            if line.startswith(mark):
                return got, line[len(mark):].strip()
            got.append(line)


class Session:
    """One user's terminal: a bash, and the psql a block opened."""

    def __init__(self, substitute, env):
        self.substitute = substitute
        self.mark = f"@@walk-{uuid.uuid4().hex}@@"
        self.bash = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=REPO, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.out = Lines(self.bash.stdout)
        self.psql = None

    def sh(self, text, timeout=300):
        self.bash.stdin.write(f"{text}\nprintf '\\n{self.mark}%s\\n' \"$?\"\n")
        self.bash.stdin.flush()
        got, rc = self.out.until(self.mark, timeout)
        if got and got[-1] == "\n":
            got.pop()  # the marker's own newline
        return "".join(got), int(rc)

    def environment(self):
        raw, _ = self.sh("env -0 | base64 -w0; echo")
        import base64
        pairs = base64.b64decode(raw.strip()).split(b"\0")
        return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)

    def open_psql(self, args):
        self.close_psql()
        self.psql = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=0", *args], cwd=REPO,
                                     env=self.environment(), text=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.psql_out = Lines(self.psql.stdout)

    def sql(self, text, timeout=120):
        assert self.psql, "an sql block with no psql open: a shell block must end in `psql …` first"
        self.psql.stdin.write(f"{text}\n\\r\n\\echo {self.mark}\n")
        self.psql.stdin.flush()
        got, _ = self.psql_out.until(self.mark, timeout)
        return re.sub(r"^psql:<stdin>:\d+: ", "", "".join(got), flags=re.M), 0

    def python(self, text, timeout=120):
        end = f"PY_{uuid.uuid4().hex}"
        return self.sh(f"python3 - <<'{end}'\n{text}\n{end}", timeout)

    def close_psql(self):
        if self.psql:
            self.psql.stdin.close()
            self.psql.wait(10)
            self.psql = None

    def close(self):
        self.close_psql()
        try:
            os.killpg(self.bash.pid, signal.SIGTERM)  # the session's background jobs too
        except ProcessLookupError:
            pass
        try:
            self.bash.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.bash.pid, signal.SIGKILL)


INTERACTIVE_PSQL = re.compile(r"^psql(\s+.*)?$")


def interactive_psql(line):
    """The arguments of a trailing `psql …` that opens a session, else None."""
    if not INTERACTIVE_PSQL.match(line.strip()):
        return None
    args = shlex.split(line.strip())[1:]
    if any(a in ("-c", "-f", "--command", "--file") or a.startswith(("--command=", "--file=")) for a in args) \
            or any(c in line for c in "<|>"):
        return None
    return args


@pytest.fixture
def machine(cli):
    """The test machine's stand-ins: a cluster for `demo 54315`, a port for 8787, this build's
    pg_todos and an xdg-open that records its URL."""
    name = f"walk{os.getpid()}"
    port = pg.free_port()
    subprocess.run(["bin/cluster", "start", name, str(port)], cwd=REPO, check=True)
    shims = tempfile.mkdtemp(prefix="pg_todos_walk_")
    os.chmod(shims, 0o755)
    os.symlink(cli, os.path.join(shims, "pg_todos"))
    opened = os.path.join(shims, "opened")
    with open(os.path.join(shims, "xdg-open"), "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\n' \"$1\" >> {opened}\n")
    os.chmod(os.path.join(shims, "xdg-open"), 0o755)
    yield {"cluster": name, "port": port, "service": pg.free_port(), "shims": shims, "opened": opened}
    subprocess.run(["bin/cluster", "destroy", name], cwd=REPO)
    shutil.rmtree(shims, ignore_errors=True)


def run_walkthrough(key, machine, session, done):
    for before in WALKTHROUGHS[key][2]:
        if before not in done:
            run_walkthrough(before, machine, session, done)
    page, heading, _ = WALKTHROUGHS[key]
    found = steps(page, heading)
    check(f"{page} § {heading}: has blocks to run", bool(found), heading)
    for n, (b, text, line) in enumerate(found, 1):
        where = f"{page} § {heading} block {n} (line {line})"
        body = session.substitute("\n".join(b.body))
        if b.info == "sh":
            lines = body.rstrip("\n").split("\n")
            opens = interactive_psql(lines[-1])
            out, rc = session.sh("\n".join(lines[:-1] if opens is not None else lines))
            if opens is not None and rc == 0:
                session.open_psql(opens)
        elif b.info == "python":
            out, rc = session.python(body)
        else:
            out, rc = session.sql(body)
        actual = clean(out.split("\n"))
        expected = clean(session.substitute("\n".join(text.body)).split("\n")) if text else None
        ok = rc == 0 and (expected is None or normalize(expected) == normalize(actual))
        check(f"{where}: runs{' and prints what the page shows' if text else ''}", ok,
              f"exit status {rc}; printed:\n" + "\n".join(actual)
              + ("" if expected is None else "\nthe page shows:\n" + "\n".join(expected)))
    done.add(key)


def start(machine):
    sub = [
        (re.compile(r"\bdemo 54315\b"), f"{machine['cluster']} {machine['port']}"),
        (re.compile(r"\b8787\b"), str(machine["service"])),
    ]

    def substitute(text):
        for pattern, repl in sub:
            text = pattern.sub(repl, text)
        return text
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "USER", "LANG", "TERM")}
    env["PATH"] = machine["shims"] + os.pathsep + os.environ["PATH"]
    env["PGTZ"] = "UTC"
    return Session(substitute, env)


def test_agents_quick_start(machine):
    """docs/agents.md's quick start: role, grants, a token kept, pg_todos serve started, an MCP
    client connected by URL, a tool called."""
    session = start(machine)
    try:
        run_walkthrough("agents", machine, session, set())
    finally:
        session.close()


def test_readme_quick_tour(machine):
    """README.md's quick tour, from the demo's cluster: createdb, psql, every statement."""
    session = start(machine)
    try:
        run_walkthrough("readme", machine, session, set())
    finally:
        session.close()


def test_board_opening_it(machine):
    """docs/board.md's setup, after agents.md's quick start: a person's token, the board opened
    by its URL, and the page that opens shows the person signed in and the list live."""
    if os.path.exists(machine["opened"]):
        os.remove(machine["opened"])
    session = start(machine)
    try:
        run_walkthrough("board", machine, session, set())
        with open(machine["opened"]) as f:
            url = f.read().split()[-1]
        check("board: xdg-open was given the board's URL with the token in its fragment",
              url.startswith(f"http://127.0.0.1:{machine['service']}/#token=pgt_"), url)
        import test_board
        driver = test_board.browser()
        try:
            driver.get(url)
            def shown():
                return (test_board.live_state(driver), test_board.text_of(driver, "#viewer"))
            try:
                test_board.wait_for("the board live and signed in",
                                    lambda: shown() == ("live", "signed in as Ada"), 20)
            except AssertionError:
                pass
            check("board: the page opened from that URL is live and signed in as Ada",
                  shown() == ("live", "signed in as Ada"), shown())
        finally:
            driver.quit()
    finally:
        session.close()
