"""model: one reference model checks every surface (issue 52, part 7), the way beads checks its
backends with one suite. A seeded random sequence of steps over two tenants: adds, edits,
status changes, claims, dependencies, deletes, whole-list writes, imports and exports, through
plain SQL, the `/todo` writ, the tool dialects (opencode, claude-todowrite, gemini,
claude-tasks, tasks, coord), REST (`todo.rest` and `pg_todos serve`'s `/v1/todos`), MCP (a
`pg_todos mcp` process over stdio and `/mcp` of `pg_todos serve`), tracker imports and
exports (`todo.import`/`todo.export` in beads' format, `todo.export_tasks`/`todo.import_tasks`),
with restarts of the service, of the MCP process and of the cluster. Every write is made as
the plain login role `agent_login` (row-level security on), in tenant A; tenant B holds the
same list names and must never change.

The model is a dict of todo id -> (list, subject, status, description, archived), and the
dependency edges. After every step, read as the superuser: every todo the model holds is there
and unchanged, no other todo exists, no id twice, every row has its insert event and no delete
event after it, the edges are the model's, `todo.verify()` is clean, tenant B is as it was. An
operation the model says is refused (a move the lifecycle forbids, a cycle, a claim of a
finished todo, an INSERT naming a deleted todo's id) must be refused, and one it says succeeds
must succeed. Two steps expose the bugs of issue 52: a whole-list write of what a read cut by
`todo.max_output_size` showed (part 1: nothing unseen may change), and a plain INSERT with a
deleted todo's id (part 2: refused).

Environment:
  PGTODOS_MODEL_SEED=N    the seed (default: random; printed in every check's detail and on
                          failure, with the failing step and the steps before it)
  PGTODOS_MODEL_STEPS=N   how many steps (default 2000, about 70 s: 3000 took 105 s on a
                          2-core machine with a build running beside it)
After a disagreement the model takes the database's state and goes on, so one run reports each
kind of failure once, with the first step that showed it."""
import asyncio
import json
import os
import random
import time
import traceback

import psycopg
from psycopg.types.json import Jsonb

import mcp_session
import web
from checks import check

SEED = int(os.environ.get("PGTODOS_MODEL_SEED") or random.SystemRandom().randrange(1, 2**31))
STEPS = int(os.environ.get("PGTODOS_MODEL_STEPS") or 2000)
A, B = "ma", "mb"
DB = "model"
OPEN = {"pending", "in_progress", "blocked"}
FINISHED = {"completed", "canceled"}
# the lists: who writes them whole (the others are written one todo at a time)
WHOLE = {"c-oc": "opencode", "c-cc": "claude-todowrite", "c-gem": "gemini"}
SINGLE = ["c-main", "c-ct"]
MCP_STDIO, MCP_HTTP, BEADS = "c-mcp", "c-mcph", "c-beads"
LISTS = [*SINGLE, *WHOLE, MCP_STDIO, MCP_HTTP, BEADS]


def lifecycle_allows(old, new):
    """The store's one lifecycle: an open todo moves anywhere; a finished one only reopens."""
    return old == new or old in OPEN or new == "pending"


class Refused(Exception):
    pass


class Model:
    def __init__(self):
        self.todos = {}  # id -> {conv, subject, status, desc, archived}
        self.edges = set()  # (todo, waits for)
        self.deleted = set()  # ids of deleted todos
        self.poisoned = set()  # ids left stuck by a failure: no step touches them again
        self.fresh = []  # (conv, subject, fields) created by this step, ids unknown yet
        self.beads = {}  # beads id -> store id

    def live(self, conv=None, pred=lambda t: True):
        return sorted(i for i, t in self.todos.items() if i not in self.poisoned and (conv is None or t["conv"] == conv)
                      and pred(t))

    def delete(self, i):
        self.todos.pop(i, None)
        self.deleted.add(i)
        self.edges = {(a, b) for a, b in self.edges if i not in (a, b)}

    def set_status(self, i, status):
        t = self.todos[i]
        if t["status"] in FINISHED and status in OPEN:
            t["archived"] = False  # a reopen puts it back on its list
        t["status"] = status

    def add(self, conv, subject, status="pending", desc=""):
        self.fresh.append((conv, subject, {"status": status, "desc": desc}))

    def cycle(self, a, b):
        """Whether a waiting for b closes a cycle (b already waits, transitively, for a)."""
        seen, todo = set(), [b]
        while todo:
            x = todo.pop()
            if x == a:
                return True
            if x not in seen:
                seen.add(x)
                todo += [w for (v, w) in self.edges if v == x]
        return False

    def open_blockers(self, i):
        return [b for (a, b) in self.edges if a == i and self.todos.get(b, {}).get("status") in OPEN]


class Run:
    """The state of one run: the model, the connections, the services, the trail of steps."""

    def __init__(self, cluster, cli, rng):
        self.cluster, self.cli, self.rng = cluster, cli, rng
        self.m = Model()
        self.trail = []
        self.step_no = 0
        self.failures = {}  # kind -> first detail
        self.counts = {}
        self.seen_problems = set()
        self.serve = None
        self.stdio = self.http = None
        self.uniq = 0
        self.connect()

    # connections

    def connect(self):
        self.app = psycopg.connect(host=self.cluster.sock, port=self.cluster.port, dbname=DB, user="agent_login",
                                   autocommit=True)
        self.su = self.cluster.connect(DB)

    def close(self):
        for c in (self.app, self.su):
            try:
                c.close()
            except Exception:
                pass

    def tx(self, conv, agent="model-sql", fn=None):
        """fn(cursor) in one transaction of agent_login with the context set; its result."""
        with self.app.transaction():
            cur = self.app.cursor()
            cur.execute("SELECT FROM todo.set_context(%s, %s, %s, %s)", (A, conv, agent, f"turn-{self.step_no}"))
            return fn(cur)

    def call(self, conv, tool, args, agent="model-tools"):
        return self.tx(conv, agent, lambda c: c.execute("SELECT todo.call(%s, %s)", (tool, Jsonb(args))).fetchone()[0])

    # names and texts

    def subject(self):
        self.uniq += 1
        words = ["fix", "write", "ship", "test", "review", "plan", "port", "draft"]
        return f"{self.rng.choice(words)} {self.rng.choice(words)} {self.uniq}-{self.rng.randrange(10**6)}"

    def text(self, big=False):
        if big:
            return "lorem ipsum " * 350 + str(self.rng.randrange(10**9))
        return self.rng.choice(["", "", f"notes {self.rng.randrange(10**6)}", "two\nlines é ✓"])

    # reporting

    def note(self, what):
        self.trail.append(f"{self.step_no}: {what}")
        del self.trail[:-20]

    def fail(self, kind, detail):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind not in self.failures:
            msg = (f"seed {SEED} (PGTODOS_MODEL_SEED={SEED} PGTODOS_MODEL_STEPS={self.step_no}), step {self.step_no}: "
                   f"{detail}\n  last steps:\n    " + "\n    ".join(self.trail))
            self.failures[kind] = msg
            print(f"MODEL DISAGREES [{kind}] {msg}", flush=True)

    def expect(self, kind, predicted_ok, ok, detail):
        if predicted_ok != ok:
            self.fail(kind, f"expected {'success' if predicted_ok else 'refusal'}, got {'success' if ok else 'refusal'}: {detail}")

    # the check after every step

    def rows(self, tenant):
        return self.su.execute(
            "SELECT id, conversation_id, subject, status, coalesce(description, ''), archived_at IS NOT NULL "
            "FROM todo.todos WHERE tenant_id = %s ORDER BY id", (tenant,)).fetchall()

    def snapshot_b(self):
        return (self.su.execute("SELECT jsonb_agg(to_jsonb(t) ORDER BY id) FROM todo.todos t WHERE tenant_id = %s", (B,)).fetchone()[0],
                self.su.execute("SELECT count(*), max(version) FROM todo.events WHERE tenant_id = %s", (B,)).fetchone(),
                self.su.execute("SELECT count(*) FROM todo.dependencies WHERE tenant_id = %s", (B,)).fetchone()[0])

    def verify(self):
        m = self.m
        rows = self.rows(A)
        ids = [r[0] for r in rows]
        if len(ids) != len(set(ids)):
            self.fail("id twice", f"ids held twice: {sorted({i for i in ids if ids.count(i) > 1})}")
        by_id = {r[0]: r for r in rows}
        # the todos this step made: found by their (unique) subjects
        for conv, subject, fields in m.fresh:
            found = [r for r in rows if r[2] == subject and r[0] not in m.todos]
            if len(found) != 1:
                self.fail("created todo missing", f"{len(found)} new rows with subject {subject!r} in {conv}")
                continue
            m.todos[found[0][0]] = {"conv": conv, "subject": subject, "status": fields["status"], "desc": fields["desc"],
                                    "archived": False}
        m.fresh = []
        for i, t in list(m.todos.items()):
            r = by_id.get(i)
            want = (t["conv"], t["subject"], t["status"], t["desc"], t["archived"])
            if r is None:
                self.fail("todo missing", f"todo {i} {want[:3]} is gone")
                m.todos.pop(i)
                m.deleted.add(i)
            elif tuple(r[1:]) != want:
                got = tuple(x if not isinstance(x, str) or len(x) < 60 else x[:20] + f"…({len(x)})" for x in r[1:])
                exp = tuple(x if not isinstance(x, str) or len(x) < 60 else x[:20] + f"…({len(x)})" for x in want)
                self.fail("todo changed", f"todo {i}: model {exp}, store {got}")
                t.update(conv=r[1], subject=r[2], status=r[3], desc=r[4], archived=r[5])
        for i, r in by_id.items():
            if i not in m.todos:
                self.fail("unknown todo", f"todo {i} {tuple(r[1:4])} is in the store, not in the model")
                m.todos[i] = {"conv": r[1], "subject": r[2], "status": r[3], "desc": r[4], "archived": r[5]}
                m.deleted.discard(i)
        edges = set(self.su.execute("SELECT todo_id, depends_on FROM todo.dependencies WHERE tenant_id = %s", (A,)).fetchall())
        if edges != m.edges:
            self.fail("dependencies", f"store only {sorted(edges - m.edges)}, model only {sorted(m.edges - edges)}")
            m.edges = edges
        bad_events = self.su.execute(
            "SELECT t.id, (SELECT array_agg(e.action ORDER BY e.version) FROM todo.events e "
            "              WHERE e.tenant_id = t.tenant_id AND e.todo_id = t.id) "
            "FROM todo.todos t WHERE t.tenant_id = %s", (A,)).fetchall()
        for i, actions in bad_events:
            if not actions or actions[0] != "insert" or "delete" in actions:
                self.fail("events", f"todo {i} has events {actions}: no insert event first, or a delete event")
        problems = self.su.execute("SELECT tenant_id, todo_id, problem FROM todo.verify()").fetchall()
        new = [p for p in problems if p not in self.seen_problems]
        if new:
            self.fail("verify", f"todo.verify(): {new[:5]}")
            self.seen_problems.update(new)
        if self.snapshot_b() != self.b:
            self.fail("tenant B changed", "tenant B's todos, events or edges changed")
            self.b = self.snapshot_b()

    # setup

    def seed_tenant_b(self):
        """Tenant B: the same list names, a few todos, an edge."""
        with self.app.transaction():
            cur = self.app.cursor()
            cur.execute("SELECT FROM todo.set_context(%s, 'c-main', 'b-agent')", (B,))
            ids = []
            for conv in LISTS:
                for k in range(2):
                    ids.append(cur.execute("INSERT INTO todo.todos (conversation_id, subject, description) VALUES (%s, %s, 'b') RETURNING id",
                                           (conv, f"b {conv} {k}")).fetchone()[0])
            cur.execute("SELECT todo.block(%s, %s)", (ids[0], ids[1]))
            cur.execute("UPDATE todo.todos SET status = 'completed' WHERE id = %s", (ids[2],))
        self.b = self.snapshot_b()

    # services

    def start_serve(self):
        if self.serve:
            self.serve.stop()
        self.serve = web.Server(self.cli, DB)

    def rest_http(self, method, path, body=None):
        st, _, payload, _ = self.serve.request(method, path, body, tok=self.token)
        return st, payload


class Steps:
    """Each step: picks its operation at random, predicts the outcome in the model, runs it."""

    def __init__(self, run):
        self.r = run
        self.m = run.m
        self.rng = run.rng

    def pick(self, conv=None, pred=lambda t: True):
        ids = self.m.live(conv, pred)
        return self.rng.choice(ids) if ids else None

    def new_status(self, old, choices=("pending", "in_progress", "completed", "canceled", "blocked")):
        return self.rng.choice([s for s in choices if s != old])

    # plain SQL

    def sql_insert(self):
        conv = self.rng.choice(SINGLE + list(WHOLE))
        s, d = self.r.subject(), self.r.text()
        self.r.note(f"sql INSERT {conv} {s!r}")
        self.r.tx(conv, fn=lambda c: c.execute("INSERT INTO todo.todos (conversation_id, subject, description) VALUES (%s, %s, NULLIF(%s, ''))",
                                               (conv, s, d)))
        self.m.add(conv, s, desc=d)

    def sql_update(self):
        i = self.pick(pred=lambda t: t["conv"] != BEADS)
        if i is None:
            return self.sql_insert()
        t = self.m.todos[i]
        what = self.rng.choice(["subject", "description", "status", "status"])
        if what == "subject":
            v = self.r.subject()
        elif what == "description":
            v = self.r.text()
        else:
            v = self.new_status(t["status"])
        ok = what != "status" or lifecycle_allows(t["status"], v)
        self.r.note(f"sql UPDATE #{i} ({t['status']}) SET {what} = {v!r:.40}")
        try:
            self.r.tx(t["conv"], fn=lambda c: c.execute(
                f"UPDATE todo.todos SET {what} = NULLIF(%s, '') WHERE id = %s", (v, i)))
            done = True
        except psycopg.Error as e:
            done, err = False, e
        self.r.expect("sql update", ok, done, f"UPDATE #{i} {what} {t['status']}→{v}" + ("" if done else f": {err}"))
        if done:
            if what == "subject":
                t["subject"] = v
            elif what == "description":
                t["desc"] = v
            else:
                self.m.set_status(i, v)

    def sql_delete(self):
        i = self.pick(pred=lambda t: t["conv"] != BEADS)
        if i is None:
            return
        self.r.note(f"sql DELETE #{i}")
        n = self.r.tx(self.m.todos[i]["conv"], fn=lambda c: c.execute("DELETE FROM todo.todos WHERE id = %s", (i,)).rowcount)
        self.r.expect("sql delete", True, n == 1, f"DELETE #{i} deleted {n} rows")
        self.m.delete(i)

    def sql_reinsert_deleted(self):
        """Issue 52 part 2: an id is never handed to a second todo."""
        gone = sorted(self.m.deleted - set(self.m.todos))
        if not gone:
            return self.sql_delete()
        i = self.rng.choice(gone)
        s = self.r.subject()
        self.r.note(f"sql INSERT (id {i}, deleted) {s!r}: must be refused")
        try:
            # in a list of its own: a row it makes is stuck (issue 52), and no other step reads it
            self.r.tx("c-stuck", fn=lambda c: c.execute("INSERT INTO todo.todos (id, conversation_id, subject) VALUES (%s, 'c-stuck', %s)", (i, s)))
            done = True
        except psycopg.Error:
            done = False
        self.r.expect("insert with a deleted id", False, done, f"INSERT INTO todo.todos (id, subject) VALUES ({i}, …) "
                      f"naming deleted todo {i}")
        if done:
            self.m.todos[i] = {"conv": "c-stuck", "subject": s, "status": "pending", "desc": "", "archived": False}
            self.m.poisoned.add(i)
            self.m.deleted.discard(i)

    # the writ

    def writ(self):
        verb = self.rng.choice(["add", "add", "start", "done", "cancel", "reopen", "describe", "subject", "delete", "block"])
        if verb == "add":
            conv = self.rng.choice(SINGLE)
            s, d = self.r.subject(), self.rng.choice(["", "a body\nof two lines"])
            msg = f"/todo add {s}\n" + (f"{d}\n/endtodo\n" if d else "")
            self.r.note(f"writ {conv}: {msg!r:.80}")
            out = self.r.tx(conv, "model-writ", lambda c: c.execute("SELECT todo.todo_writ(%s)", (msg,)).fetchone()[0])
            self.r.expect("writ add", True, "OK: added" in out, out)
            self.m.add(conv, s, desc=d)
            return
        i = self.pick(pred=lambda t: not t["archived"] and t["conv"] != BEADS)
        if i is None:
            return
        t = self.m.todos[i]
        arg = ""
        if verb in ("start", "done", "cancel", "reopen"):
            to = {"start": "in_progress", "done": "completed", "cancel": "canceled", "reopen": "pending"}[verb]
            # a move to the status it has is a no-op that answers OK; reopen moves any todo to pending
            ok = lifecycle_allows(t["status"], to)
        elif verb in ("describe", "subject"):
            arg = self.r.subject()
            ok = True
        elif verb == "block":
            j = self.pick(t["conv"])
            if j is None or j == i:
                return
            arg = f" on {j}"
            ok = not self.m.cycle(i, j) and (i, j) not in self.m.edges
        else:
            ok = True
        cmd = f"/todo {verb} {i}" + (f": {arg}" if verb in ("describe", "subject") else arg)
        self.r.note(f"writ {t['conv']} (#{i} {t['status']}): {cmd}")
        out = self.r.tx(t["conv"], "model-writ", lambda c: c.execute("SELECT todo.todo_writ(%s)", (cmd,)).fetchone()[0])
        done = "\nOK:" in out
        if verb == "block" and (i, j) in self.m.edges:
            done = True  # an edge that exists already: nothing to do (OK or ERR both leave it)
            ok = True
        self.r.expect(f"writ {verb}", ok, done, f"{cmd} on a {t['status']} todo: {out.strip()}")
        if not done:
            return
        if verb == "delete":
            self.m.delete(i)
        elif verb == "describe":
            t["desc"] = arg
        elif verb == "subject":
            t["subject"] = arg
        elif verb == "block":
            self.m.edges.add((i, j))
        else:
            self.m.set_status(i, to)

    # REST: todo.rest (SQL) or pg_todos serve's /v1/todos (HTTP)

    def rest(self, http=None):
        http = self.rng.random() < 0.5 if http is None else http
        via = "http" if http else "sql"

        def send(method, path, body=None, conv="c-main"):
            if http:
                return self.r.rest_http(method, path, body)
            out = self.r.tx(conv, "model-rest", lambda c: c.execute("SELECT todo.rest(%s, %s, %s)", (method, path, Jsonb(body) if body is not None else None)).fetchone()[0])
            return out["status"], out["body"]

        op = self.rng.choice(["post", "patch", "patch", "patch", "delete", "get"])
        i = self.pick(pred=lambda t: t["conv"] != BEADS)
        if op == "post" or i is None:
            conv = self.rng.choice(SINGLE + list(WHOLE))
            s, d = self.r.subject(), self.r.text()
            status = self.rng.choice(["pending", "pending", "in_progress", "completed", "cancelled", "blocked"])
            body = {"subject": s, "conversation_id": conv, "status": status}
            if d:
                body["description"] = d
            self.r.note(f"rest/{via} POST {body}")
            st, out = send("POST", "/v1/todos", body, conv)
            self.r.expect(f"rest/{via} post", True, st == 201, f"POST {body}: {st} {out}")
            if st == 201:
                self.m.add(conv, s, "canceled" if status == "cancelled" else status, d)
            return
        t = self.m.todos[i]
        if op == "get":
            self.r.note(f"rest/{via} GET /v1/todos/{i}")
            st, out = send("GET", f"/v1/todos/{i}")
            got = out.get("todo", {}) if isinstance(out, dict) else {}
            ok = st == 200 and got.get("subject") == t["subject"] and got.get("status") == t["status"] \
                and (got.get("description") or "") == t["desc"]
            self.r.expect(f"rest/{via} get", True, ok, f"GET #{i}: {st} {str(out)[:300]}, model {t['subject']!r} {t['status']}")
            return
        if op == "delete":
            self.r.note(f"rest/{via} DELETE /v1/todos/{i}")
            st, out = send("DELETE", f"/v1/todos/{i}")
            self.r.expect(f"rest/{via} delete", True, st == 200, f"DELETE #{i}: {st} {out}")
            if st == 200:
                self.m.delete(i)
            return
        field = self.rng.choice(["status", "status", "subject", "description"])
        if field == "status":
            v = self.new_status(t["status"], ("pending", "in_progress", "completed", "canceled", "cancelled", "blocked"))
            stored = "canceled" if v == "cancelled" else v
            ok = lifecycle_allows(t["status"], stored)
        else:
            v, ok = (self.r.subject() if field == "subject" else self.r.text() or "x"), True
        self.r.note(f"rest/{via} PATCH /v1/todos/{i} ({t['status']}) {field}={v!r:.40}")
        st, out = send("PATCH", f"/v1/todos/{i}", {field: v})
        self.r.expect(f"rest/{via} patch", ok, st == 200, f"PATCH #{i} {field} {t['status']}→{v}: {st} {out}")
        if st == 200:
            if field == "status":
                self.m.set_status(i, stored)
            elif field == "subject":
                t["subject"] = v
            else:
                t["desc"] = v

    # claims and dependencies: SQL functions and the coord dialect

    def claim(self):
        i = self.pick(pred=lambda t: not t["archived"] and t["conv"] != BEADS)
        if i is None:
            return
        t = self.m.todos[i]
        end = self.rng.choice(["completed", "canceled", "release"])
        # a claim by id takes any open todo (a `blocked` status too: only open todos it waits
        # for refuse it, docs/coordination.md), never a finished one
        ok = t["status"] not in FINISHED and not self.m.open_blockers(i)
        tool = self.rng.random() < 0.5
        self.r.note(f"claim #{i} ({t['status']}, blockers {self.m.open_blockers(i)}) then {end}{' via coord' if tool else ''}")

        def run(c):
            if tool:
                got = c.execute("SELECT todo.call('claim_todo', %s)", (Jsonb({"id": i}),)).fetchone()[0]
                if not got.get("claimed"):
                    return False, got
                fence = got["fence"]
                if end == "release":
                    out = c.execute("SELECT todo.call('release_todo', %s)", (Jsonb({"id": i, "fence": fence}),)).fetchone()[0]
                else:
                    out = c.execute("SELECT todo.call('finish_todo', %s)", (Jsonb({"id": i, "fence": fence, "status": end}),)).fetchone()[0]
                if "error" in out:
                    raise Refused(out)
                return True, out
            c.execute("SAVEPOINT s")
            try:
                got = c.execute("SELECT fence FROM todo.claim(%s)", (i,)).fetchone()
            except psycopg.Error as e:
                c.execute("ROLLBACK TO SAVEPOINT s")
                return False, str(e)
            if got is None:
                return False, "no row"
            if end == "release":
                c.execute("SELECT todo.release(%s, %s)", (i, got[0]))
            else:
                c.execute("SELECT todo.finish(%s, %s, %s)", (i, got[0], end))
            return True, got
        done, out = self.r.tx(t["conv"], "model-claimer", run)
        self.r.expect("claim", ok, done, f"claim #{i} ({t['status']}): {out}")
        if done:
            self.m.set_status(i, "pending" if end == "release" else end)

    def block(self):
        conv = self.rng.choice(SINGLE + list(WHOLE))
        ids = self.m.live(conv)
        if len(ids) < 2:
            return
        a, b = self.rng.sample(ids, 2)
        if (a, b) in self.m.edges and self.rng.random() < 0.7:
            self.r.note(f"unblock #{a} on #{b}")
            out = self.r.tx(conv, fn=lambda c: c.execute("SELECT todo.unblock(%s, %s)", (a, b)).fetchone()[0])
            self.r.expect("unblock", True, out is True, f"unblock #{a} on #{b}: {out}")
            self.m.edges.discard((a, b))
            return
        ok = not self.m.cycle(a, b)
        tool = self.rng.random() < 0.5
        self.r.note(f"block #{a} on #{b}{' via block_todo' if tool else ''}")

        def run(c):
            if tool:
                out = c.execute("SELECT todo.call('block_todo', %s)", (Jsonb({"id": a, "on": b}),)).fetchone()[0]
                return "error" not in out, out
            c.execute("SAVEPOINT s")
            try:
                return True, c.execute("SELECT todo.block(%s, %s)", (a, b)).fetchone()[0]
            except psycopg.Error as e:
                c.execute("ROLLBACK TO SAVEPOINT s")
                return False, str(e)
        done, out = self.r.tx(conv, "model-deps", run)
        self.r.expect("block", ok, done, f"block #{a} on #{b}: {out}")
        if done:
            self.m.edges.add((a, b))

    # one-at-a-time dialects: claude-tasks and tasks (seed 004)

    def claude_tasks(self, conv="c-ct", call=None):
        call = call or (lambda tool, args: self.r.call(conv, tool, args))
        i = self.pick(conv, lambda t: not t["archived"] and t["status"] in ("pending", "in_progress"))
        op = self.rng.choice(["create", "create", "update", "update", "delete", "depend"])
        if op == "create" or i is None:
            s, d = self.r.subject(), self.rng.choice(["", "task details"])
            args = {"subject": s, "description": d} if d else {"subject": s, "description": ""}
            self.r.note(f"{conv} TaskCreate {s!r}")
            return call("TaskCreate", args), lambda out: self.m.add(conv, s, desc=d)
        t = self.m.todos[i]
        if op == "delete":
            self.r.note(f"{conv} TaskUpdate #{i} deleted")
            return call("TaskUpdate", {"taskId": str(i), "status": "deleted"}), lambda out: self.m.delete(i)
        if op == "depend":
            j = self.pick(conv, lambda u: not u["archived"] and u["status"] != "canceled")
            if j is None or j == i:
                return None, None
            ok = not self.m.cycle(i, j)
            self.r.note(f"{conv} TaskUpdate #{i} addBlockedBy #{j}")

            def after(out):
                done = isinstance(out, dict) and out.get("success") is True
                self.r.expect("TaskUpdate addBlockedBy", ok, done, f"#{i} blocked by #{j}: {out}")
                if done:
                    self.m.edges.add((i, j))
            return call("TaskUpdate", {"taskId": str(i), "addBlockedBy": [str(j)]}), after
        args = {"taskId": str(i)}
        changes = {}
        if self.rng.random() < 0.6:
            args["status"] = self.rng.choice([s for s in ("pending", "in_progress", "completed") if s != t["status"]])
        if self.rng.random() < 0.4 or len(args) == 1:
            args["subject"] = changes["subject"] = self.r.subject()
        if self.rng.random() < 0.3:
            args["description"] = changes["desc"] = self.r.text() or "d"
        self.r.note(f"{conv} TaskUpdate {args}")

        def after(out):
            done = isinstance(out, dict) and out.get("success") is True
            self.r.expect("TaskUpdate", True, done, f"{args}: {out}")
            if done:
                t.update(changes)
                if "status" in args:
                    self.m.set_status(i, args["status"])
        return call("TaskUpdate", args), after

    def run_claude_tasks(self):
        out, after = self.claude_tasks()
        if after:
            after(out)

    def tasks(self):
        conv = "c-main"
        op = self.rng.choice(["add", "complete", "uncomplete", "delete"])
        if op == "add":
            s, d = self.r.subject(), self.r.text()
            self.r.note(f"AddTask {s!r}")
            out = self.r.call(conv, "AddTask", {"title": s, "description": d})
            self.r.expect("AddTask", True, isinstance(out, dict) and out.get("title") == s, f"{out}")
            self.m.add(conv, s, desc=d)
            return
        want = {"complete": lambda t: t["status"] in OPEN, "uncomplete": lambda t: t["status"] == "completed",
                "delete": lambda t: t["status"] != "canceled"}[op]
        i = self.pick(conv, lambda t: not t["archived"] and want(t))
        if i is None:
            return
        tool = {"complete": "CompleteTask", "uncomplete": "UncompleteTask", "delete": "DeleteTask"}[op]
        self.r.note(f"{tool} {i} ({self.m.todos[i]['status']})")
        out = self.r.call(conv, tool, {"taskId": str(i)})
        ok = isinstance(out, dict) and out.get("ok") is True
        self.r.expect(tool, True, ok, f"{tool} #{i}: {out}")
        if ok:
            if op == "delete":
                self.m.delete(i)
            else:
                self.m.set_status(i, "completed" if op == "complete" else "pending")

    # whole-list writes

    def whole_items(self, dialect, conv, read=None):
        """A random new whole list for `conv` from the model's list; applies it to the model
        when `apply`. Returns (items, apply)."""
        m = self.m
        kept_all = dialect in ("opencode", "gemini")
        listed = m.live(conv, lambda t: not t["archived"] and (kept_all or t["status"] != "canceled"))
        statuses = {"opencode": ["pending", "in_progress", "completed", "cancelled"],
                    "claude-todowrite": ["pending", "in_progress", "completed"],
                    "gemini": ["pending", "in_progress", "completed", "cancelled", "blocked"]}[dialect]
        shown = {"canceled": "cancelled"}
        items, plan = [], []  # plan: (id or None, subject, stored status)
        in_progress = 0
        for i in listed:
            t = m.todos[i]
            if self.rng.random() < 0.15:
                continue  # left out
            st = shown.get(t["status"], t["status"])
            if st == "blocked" and dialect != "gemini":
                st = "pending"
            if self.rng.random() < 0.3:
                st = self.rng.choice(statuses)
            if st == "in_progress":
                if in_progress:
                    st = "pending"
                in_progress += 1
            subject = t["subject"]
            if dialect == "opencode" and self.rng.random() < 0.1:
                subject = self.r.subject()  # same id, new content: an edit
            plan.append((i, subject, st))
        for _ in range(self.rng.choice([0, 0, 1, 2, 3])):
            st = self.rng.choice([s for s in statuses if s != "in_progress" or not in_progress])
            in_progress += st == "in_progress"
            plan.insert(self.rng.randrange(len(plan) + 1), (None, self.r.subject(), st))
        for i, subject, st in plan:
            if dialect == "opencode":
                item = {"content": subject, "status": st, "priority": "medium"}
                if i is not None:
                    item["id"] = str(i)
            elif dialect == "claude-todowrite":
                item = {"content": subject, "status": st, "activeForm": subject + "-ing"}
            else:
                item = {"description": subject, "status": st}
            items.append(item)

        def apply():
            matched = {i for i, _, _ in plan if i is not None}
            for i in listed:
                if i not in matched:
                    if dialect != "opencode" and m.todos[i]["status"] in FINISHED:
                        m.todos[i]["archived"] = True
                    else:
                        m.delete(i)
            for i, subject, st in plan:
                stored = "canceled" if st == "cancelled" else st
                if i is None:
                    m.add(conv, subject, stored)
                    continue
                t = m.todos[i]
                t["subject"] = subject
                if not (stored == "pending" and t["status"] == "blocked" and dialect != "gemini"):
                    m.set_status(i, stored)
        return items, apply

    def whole_list(self):
        conv = self.rng.choice(list(WHOLE))
        dialect = WHOLE[conv]
        items, apply = self.whole_items(dialect, conv)
        tool = {"opencode": "todowrite", "claude-todowrite": "TodoWrite", "gemini": "gemini/write_todos"}[dialect]
        self.r.note(f"{conv} {tool} {len(items)} items: {json.dumps(items)[:300]}")
        out = self.r.call(conv, tool, {"todos": items})
        ok = not (isinstance(out, dict) and "error" in out)
        self.r.expect(f"{tool}", True, ok, f"{tool}: {out}")
        if ok:
            apply()

    def cut_write_back(self):
        """Issue 52 part 1: a whole-list write of what a read cut by todo.max_output_size
        showed changes nothing the read did not show. The list gets big descriptions first."""
        conv = "c-oc"
        while len(self.m.live(conv, lambda t: not t["archived"])) < 14:
            s = self.r.subject()
            self.r.tx(conv, fn=lambda c: c.execute("INSERT INTO todo.todos (conversation_id, subject) VALUES (%s, %s)", (conv, s)))
            self.m.add(conv, s)
            self.r.verify()
        for i in self.m.live(conv, lambda t: not t["archived"]):
            d = self.r.text(big=True)
            self.r.tx(conv, fn=lambda c: c.execute("UPDATE todo.todos SET description = %s WHERE id = %s", (d, i)))
            self.m.todos[i]["desc"] = d
        self.r.note(f"{conv}: big descriptions; todoread under todo.max_output_size = 32768, todowrite of what it showed")
        try:
            with self.r.su.transaction():
                c = self.r.su.cursor()
                c.execute("SELECT FROM todo.set_context(%s, %s, 'model-cut', 'cut')", (A, conv))
                c.execute("SET LOCAL todo.max_output_size = 32768")
                read = c.execute("SELECT todo.call('todoread', '{}')").fetchone()[0]
                todos = read["metadata"]["todos"]
                self.r.note(f"  todoread showed {len(todos)} of {len(self.m.live(conv, lambda t: not t['archived']))}")
                out = c.execute("SELECT todo.call('todowrite', %s)", (Jsonb({"todos": todos}),)).fetchone()[0]
                self.r.note(f"  todowrite answered {str(out)[:120]}")
        except psycopg.Error as e:
            self.r.note(f"  refused: {e}")
        # expected: nothing changed (the write is refused, or changes only what it showed,
        # which it sends back unchanged)
        # and the same through the task file: export_tasks, then import_tasks
        self.r.note(f"{conv}: export_tasks then import_tasks under todo.max_output_size = 32768")
        try:
            with self.r.su.transaction():
                c = self.r.su.cursor()
                c.execute("SELECT FROM todo.set_context(%s, %s, 'model-cut', 'cut')", (A, conv))
                c.execute("SET LOCAL todo.max_output_size = 32768")
                f = c.execute("SELECT todo.export_tasks(%s)", (conv,)).fetchone()[0]
                self.r.note(f"  export_tasks showed {len(f['tasks'])}")
                c.execute("SELECT todo.import_tasks(%s, %s)", (conv, Jsonb(f)))
            # what the file showed is written back: not done is pending (an in-progress todo
            # becomes pending, a blocked one stays blocked); nothing else changes
            for x in f["tasks"]:
                i = int(x["id"])
                if i in self.m.todos and self.m.todos[i]["status"] == "in_progress":
                    self.m.set_status(i, "pending")
        except psycopg.Error as e:
            self.r.note(f"  refused: {e}")
        # the descriptions go back to small ones, for the steps after
        for i in self.m.live(conv):
            self.r.tx(conv, fn=lambda c: c.execute("UPDATE todo.todos SET description = NULL WHERE id = %s", (i,)))
            self.m.todos[i]["desc"] = ""

    # imports and exports

    def beads_import(self):
        m = self.m
        lines, after = [], []
        for bid, i in sorted(m.beads.items()):
            if i not in m.todos or i in m.poisoned or self.rng.random() < 0.3:
                continue  # an import never deletes what its files leave out
            t = m.todos[i]
            status = {"pending": "open", "in_progress": "in_progress", "completed": "closed", "blocked": "blocked"}.get(t["status"])
            if status is None:
                continue
            title, desc = t["subject"], t["desc"]
            if self.rng.random() < 0.3:
                status = self.rng.choice(["open", "in_progress", "closed"])
            if self.rng.random() < 0.2:
                title = self.r.subject()
            if self.rng.random() < 0.2:
                desc = self.r.text()
            lines.append({"id": bid, "title": title, "description": desc, "status": status, "priority": 2, "issue_type": "task"})
            stored = {"open": "pending", "closed": "completed"}.get(status, status)
            after.append((i, title, desc, stored))
        new = []
        for _ in range(self.rng.choice([0, 1, 2])):
            bid = f"bd-{self.r.uniq + 1:x}{self.rng.randrange(4096):03x}"
            s, d = self.r.subject(), self.r.text()
            status = self.rng.choice(["open", "in_progress", "closed"])
            lines.append({"id": bid, "title": s, "description": d, "status": status, "priority": 2, "issue_type": "task"})
            new.append((bid, s, d, {"open": "pending", "closed": "completed"}.get(status, status)))
        if not lines:
            return
        self.rng.shuffle(lines)
        text = "".join(json.dumps(x) + "\n" for x in lines)
        self.r.note(f"import beads {BEADS}: {len(lines)} issues, {len(new)} new: {text[:200]!r}")
        out = self.r.tx(BEADS, "model-import", lambda c: c.execute("SELECT todo.import('beads', %s, %s)",
                                                                     (Jsonb({".beads/issues.jsonl": text}), BEADS)).fetchone()[0])
        self.r.expect("import beads", True, isinstance(out, dict), f"{out}")
        for i, title, desc, st in after:
            m.todos[i].update(subject=title, desc=desc)
            m.set_status(i, st)
        for bid, s, d, st in new:
            m.add(BEADS, s, st, d)
        self.pending_beads = [(bid, s) for bid, s, _, _ in new]

    def bind_beads(self):
        for bid, s in getattr(self, "pending_beads", []):
            for i, t in self.m.todos.items():
                if t["subject"] == s and t["conv"] == BEADS:
                    self.m.beads[bid] = i
        self.pending_beads = []

    def beads_export(self):
        self.r.note(f"export beads {BEADS}")
        rows = self.r.tx(BEADS, "model-export", lambda c: c.execute("SELECT path, content FROM todo.export('beads', %s)", (BEADS,)).fetchall())
        files = dict(rows)
        text = files.get(".beads/issues.jsonl", "")
        got = {}
        for line in text.splitlines():
            o = json.loads(line)
            got[o["id"]] = (o["title"], o.get("description", ""), o["status"])
        want = {}
        by_store = {i: bid for bid, i in self.m.beads.items()}
        for i in self.m.live(BEADS):
            t = self.m.todos[i]
            st = {"pending": "open", "completed": "closed"}.get(t["status"], t["status"])
            want[by_store.get(i, str(i))] = (t["subject"], t["desc"], st)
        self.r.expect("export beads", True, got == want,
                      f"export differs: only exported {sorted(set(got.items()) - set(want.items()))[:3]}, only in model {sorted(set(want.items()) - set(got.items()))[:3]}")

    def tasks_roundtrip(self):
        """export_tasks, edit the file, import_tasks (a whole-list write of seed 004: what the
        file leaves out is deleted; canceled todos are not in it and stay)."""
        conv = self.rng.choice(["c-oc", "c-main"])
        f = self.r.tx(conv, "model-files", lambda c: c.execute("SELECT todo.export_tasks(%s)", (conv,)).fetchone()[0])
        listed = self.m.live(conv, lambda t: not t["archived"] and t["status"] != "canceled")
        ids = [int(x["id"]) for x in f["tasks"]]
        self.r.expect("export_tasks", True, sorted(ids) == listed, f"export_tasks {conv}: {sorted(ids)}, model {listed}")
        tasks = []
        for x in f["tasks"]:
            if self.rng.random() < 0.15:
                continue
            if self.rng.random() < 0.3:
                x["done"] = not x["done"]
            if self.rng.random() < 0.15:
                x["title"] = self.r.subject()
            tasks.append(x)
        for _ in range(self.rng.choice([0, 1, 2])):
            tasks.insert(self.rng.randrange(len(tasks) + 1), {"id": f"new{self.rng.randrange(10**6)}", "title": self.r.subject(),
                                                               "description": "", "done": self.rng.random() < 0.3})
        self.r.note(f"import_tasks {conv}: {json.dumps(tasks)[:300]}")
        out = self.r.tx(conv, "model-files", lambda c: c.execute("SELECT todo.import_tasks(%s, %s)", (conv, Jsonb({"tasks": tasks}))).fetchone()[0])
        self.r.expect("import_tasks", True, isinstance(out, dict) and "tasks" in out, f"{out}")
        kept = {int(x["id"]) for x in tasks if x["id"].isdigit() and int(x["id"]) in self.m.todos}
        for i in ids:
            if i not in kept and i in self.m.todos:
                self.m.delete(i)
        for x in tasks:
            if x["id"].isdigit() and int(x["id"]) in self.m.todos:
                t = self.m.todos[int(x["id"])]
                t["subject"] = x["title"]
                t["desc"] = x["description"] or ""
                # done: completed; not done: pending (a blocked todo stays blocked)
                if x["done"] or t["status"] != "blocked":
                    self.m.set_status(int(x["id"]), "completed" if x["done"] else "pending")
            else:
                self.m.add(conv, x["title"], "completed" if x["done"] else "pending", x["description"])


async def run_steps(run, steps):
    r = run
    m = r.m
    s = Steps(r)
    mcp_tools = ("claude-tasks,gemini")

    async def open_stdio():
        st = mcp_session.Stdio(r.cli, DB, "--tenant", A, "--conversation", MCP_STDIO, "--agent", "model-mcp",
                               "--tools", mcp_tools, cwd="/tmp")
        await st.__aenter__()
        return st

    async def open_http():
        h = mcp_session.Http(f"{r.serve.url}/mcp?list={MCP_HTTP}&tools={mcp_tools}", r.token)
        await h.__aenter__()
        return h

    async def close(sess):
        if sess:
            try:
                await sess.__aexit__(None, None, None)  # in this task: anyio's scopes must close where they opened
            except BaseException as e:
                print(f"model: closing an MCP session: {type(e).__name__}: {e}", flush=True)

    async def mcp(sess, conv):
        if conv == MCP_HTTP and s.rng.random() < 0.3:
            items, apply = s.whole_items("gemini", conv)
            r.note(f"mcp {conv} write_todos {json.dumps(items)[:300]}")
            got, err, text = await sess.call("write_todos", {"todos": items})
            r.expect("mcp write_todos", True, not err, f"{text[:300]}")
            if not err:
                apply()
            return
        results = []

        def call(tool, args):
            results.append((tool, args))
            return None
        _, after = s.claude_tasks(conv, call)
        if not results:
            return
        tool, args = results[0]
        got, err, text = await sess.call(tool, args)
        r.expect(f"mcp {tool}", True, not err, f"{args}: {text[:300]}")
        if not err and after:
            after(got)

    r.stdio = await open_stdio()
    r.http = await open_http()
    ops = [(s.sql_insert, 8), (s.sql_update, 10), (s.sql_delete, 3), (s.sql_reinsert_deleted, 1), (s.writ, 8),
           (s.rest, 8), (s.claim, 4), (s.block, 4), (s.run_claude_tasks, 6), (s.tasks, 5), (s.whole_list, 10),
           (s.beads_import, 3), (s.beads_export, 1), (s.tasks_roundtrip, 2),
           ("mcp-stdio", 6), ("mcp-http", 6), ("restart-serve", 0.4), ("restart-mcp", 0.4), ("restart-cluster", 0.3),
           (s.cut_write_back, 0.25)]
    fns, weights = zip(*ops)
    # every kind once early, so a short run covers them all
    order = [f for f in fns if f not in ("restart-cluster",)] + ["restart-cluster"]
    try:
        for n in range(1, steps + 1):
            r.step_no = n
            f = order[n - 1] if n <= len(order) else s.rng.choices(fns, weights)[0]
            try:
                if f == "mcp-stdio":
                    await mcp(r.stdio, MCP_STDIO)
                elif f == "mcp-http":
                    await mcp(r.http, MCP_HTTP)
                elif f in ("restart-serve", "restart-mcp"):
                    # both MCP clients closed, last opened first (anyio's scopes nest), and opened again
                    r.note("restart pg_todos serve" if f == "restart-serve" else "restart pg_todos mcp (stdio)")
                    await close(r.http)
                    await close(r.stdio)
                    if f == "restart-serve":
                        r.start_serve()
                    r.stdio = await open_stdio()
                    r.http = await open_http()
                elif f == "restart-cluster":
                    r.note("restart the cluster (pg_ctl stop -m fast; start)")
                    r.close()
                    r.cluster.restart()
                    r.connect()
                else:
                    f()
            except Exception as e:  # an operation that raised where the model expected an answer
                r.fail(f"step raised ({getattr(f, '__name__', f)})", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")
                try:
                    r.app.rollback()
                except Exception:
                    r.close()
                    r.connect()
                m.fresh = []
            r.verify()
            s.bind_beads()
            if n % 25 == 0:
                print(f"model: step {n}, {len(m.todos)} todos, {len(m.edges)} edges", flush=True)
    except BaseException as e:
        print(f"model: the steps stopped at step {r.step_no}: {type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}", flush=True)
        r.fail("steps stopped", f"{type(e).__name__}: {e}")
    finally:
        await close(r.http)
        await close(r.stdio)


def test_one_model_checks_every_surface(new_cluster, cli):
    t0 = time.monotonic()
    print(f"model: PGTODOS_MODEL_SEED={SEED} PGTODOS_MODEL_STEPS={STEPS}", flush=True)
    c = new_cluster("model")
    c.database(DB, tenants=[A, B])
    run = Run(c, cli, random.Random(SEED))
    run.token = web.token(DB, A, "model-http")[1]
    run.start_serve()
    try:
        run.seed_tenant_b()
        run.verify()
        # not asyncio.run: its cancelling of the MCP clients' leftover tasks at the end can hang
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(run_steps(run, STEPS))
        finally:
            loop.close()
    finally:
        if run.serve:
            run.serve.stop()
        run.close()
    took = time.monotonic() - t0
    seed = f"(seed {SEED}, {STEPS} steps, {took:.0f} s; rerun with PGTODOS_MODEL_SEED={SEED})"
    kinds = ["todo missing", "todo changed", "unknown todo", "created todo missing", "id twice", "dependencies", "events",
             "verify", "tenant B changed"]
    for k in kinds:
        check(f"model: {k}: never", k not in run.failures, f"{seed} {run.counts.get(k, 0)} times; first: {run.failures.get(k, '')}")
    others = sorted(k for k in run.failures if k not in kinds)
    check("model: every operation answered as the model predicts", not others,
          f"{seed} " + "\n".join(f"[{k}] {run.counts[k]} times; first: {run.failures[k]}" for k in others))
    print(f"model: {STEPS} steps in {took:.1f} s, seed {SEED}", flush=True)
