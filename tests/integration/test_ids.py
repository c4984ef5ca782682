#!/usr/bin/env python3
"""ids: a stateful, randomized run (seeded) of eight sessions, each a psycopg connection of the
plain role agent_login (granted with todo.grant_usage; no superuser, no BYPASSRLS), adding
todos to three tenants on a cluster of its own, in four phases, every way a caller can:
  - single adds: `todo.todo_writ('/todo add …')`, sometimes two or three writs in one
    transaction with a pause between them (so writers hold ranges at once);
  - bulk adds: one writ message of 2 to 200 `/todo add` lines (the writ's limit);
  - REST adds: `todo.rest('POST', '/v1/todos', …)`;
  - imports: `todo.import_tasks(conversation, file)`, the file naming the conversation's own
    tasks by id, an id of another conversation's todo and an id no todo has, and new tasks;
  - explicit ids: the app's plain SQL `INSERT INTO todo.todos (…, id, …)` naming an id the
    tenant's counter has handed out and no todo ever had (one a range has still to hand out,
    or a gap), the only way a caller names a new todo's id (a REST POST has no id field;
    import_tasks and the writ take their ids from the ranges). Another session's add may
    take the id first (it held the range), and an import may delete that todo before this
    INSERT runs: the INSERT is then refused (23505, ids are never reused), where 1.0.0 stored
    a row with no insert event that could never be changed;
  - aborts: adds then ROLLBACK, or adds in a savepoint rolled back and more adds committed;
  - restarts: a session closes its connection and opens another, and once, halfway through
    phase 2, the cluster itself stops (immediate: the server's crash) and starts again.
Odd sessions plan with `plan_cache_mode = force_generic_plan` (the plan shape of the bug fixed
in 0.9.1); even ones with the default. Before the run, 2,000 filler tenants add one todo each
(one id range each in todo.id_ranges), and 1,000 more after phase 2; ANALYZE runs between
phases: the layout in which the old refill gave two emptied ranges the same ids.

A superuser's monitor polls the three tenants' ranges throughout (refills seen, empty ranges at
once, ranges that overlap or pass the counter). Checked, with the seed named in each failed
check (PGTODOS_IDS_SEED replays the choices; the interleaving is the scheduler's):
  - no call failed with 23505 (duplicate key), as an error or a writ's `ERR:` line, counted
    per kind of call; no other unexpected error;
  - every id a committed add returned is unique per tenant, and the todo with it is the one
    added (its subject); no id has two insert events;
  - `todo.verify()` (as superuser) finds nothing after each phase and at the end;
  - ranges were refilled, some tenant has more than one range, two were empty at once, and
    the monitor never saw two ranges overlap;
  - the run could meet the old bug: after each phase (fresh statistics) 0.9.0's refill
    statement, run generic as a superuser and rolled back, refills two or more of a tenant's
    empty ranges at once on the run's layout, where the current statement refills one;
  - sessions went on after the cluster's restart.
A second test builds the broken state the old refill left (two ranges handing out the same
ids) and shows the checks see it: todo.verify() reports it, and two sessions' adds through
the same code meet a 23505, counted as this run would count it.

Sizes: PGTODOS_IDS_OPS=N operations per session (2000, in four phases: about a minute);
PGTODOS_IDS_SEED=S the seed (default: random, printed).
"""
import os
import random
import re
import threading
import time
import traceback
from collections import Counter, defaultdict

import psycopg
import psycopg.sql
from psycopg.types.json import Jsonb

from checks import check

SESSIONS = 8
OPS = int(os.environ.get("PGTODOS_IDS_OPS", "2000"))
SEED = int(os.environ.get("PGTODOS_IDS_SEED") or random.SystemRandom().randrange(1, 2**31))
PHASES = 4
RESTART_PHASE = 2
TENANTS = ["alpha", "beta", "gamma"]
TENANT_WEIGHTS = [5, 3, 1]
FILLERS = 2000
MORE_FILLERS = 1000
KINDS = ["writ_add", "writ_bulk", "rest_post", "import", "explicit", "abort", "reconnect"]
WEIGHTS = [30, 12, 12, 8, 8, 10, 2]
ADD_KINDS = ["writ_add", "writ_bulk", "rest_post", "import", "explicit", "abort"]

ADDED = re.compile(r"^OK: added #(\d+) — (.*)$", re.M)
SEEDED = f"[PGTODOS_IDS_SEED={SEED}]"


def seeded(name, ok, detail=""):
    """A check whose failure names the seed that replays the run's choices."""
    return check(name, ok, f"{detail} {SEEDED}" if not ok else detail)


def is_dup(text):
    return "23505" in text or "duplicate key" in text or "todos_pkey" in text


def writ_result(out):
    """(the ids and subjects a writ's answer says it added, its ERR: lines)."""
    return [(int(i), s) for i, s in ADDED.findall(out)], [l for l in out.splitlines() if l.startswith("ERR:")]


class Lost(Exception):
    """The connection died (the cluster's restart): the transaction's outcome is unknown."""


class Run:
    """What every session saw: the ledger of committed adds, the failures by kind."""

    def __init__(self, cluster, db):
        self.cluster, self.db = cluster, db
        self.lock = threading.Lock()
        self.stats = Counter()          # ops done per kind, and other counts
        self.dups = defaultdict(list)   # kind -> [what failed with 23505]
        self.unexpected = []            # every other error no one expected
        self.ledger = defaultdict(list)  # tenant -> [(id, subject, kind, conversation)]
        self.lost = []                  # (when the connection opened, op) cut by a lost connection
        self.named_taken = []           # explicit ids another add took meanwhile (legitimate)
        self.phase = 0
        self.restart_done = None        # when the cluster was up again after its restart
        self.restarted_at = None        # ops done when the cluster restarted
        self.after_restart = 0          # ops done after it
        self.done_in_phase = 0

    def dup(self, kind, what):
        with self.lock:
            self.dups[kind].append(what)

    def oops(self, what):
        with self.lock:
            self.unexpected.append(what)

    def committed(self, tenant, kind, conv, added):
        with self.lock:
            for i, s in added:
                self.ledger[tenant].append((i, s, kind, conv))

    def connect(self, n):
        """agent_login's connection of session n (retried while the cluster restarts)."""
        deadline = time.time() + 120
        while True:
            try:
                conn = self.cluster.connect(self.db, user="agent_login", connect_timeout=5)
                if n % 2:
                    conn.execute("SET plan_cache_mode = force_generic_plan")
                return conn
            except psycopg.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)


class Session:
    def __init__(self, run, n):
        self.run, self.n = run, n
        self.conn = run.connect(n)
        self.opened = time.time()
        self.agent = f"agent-{n}"
        self.i = 0

    def close(self):
        try:
            self.conn.close()
        except psycopg.Error:
            pass

    def reopen(self):
        self.close()
        self.conn = self.run.connect(self.n)
        self.opened = time.time()

    def context(self, cur, tenant, conv):
        cur.execute("SELECT todo.set_context(%s, %s, %s)", (tenant, conv, self.agent))

    def writ(self, cur, kind, message):
        """Runs a writ; the todos it added. Its ERR: lines are failures (a 23505 by kind)."""
        cur.execute("SELECT todo.todo_writ(%s)", (message,))
        out = cur.fetchone()[0]
        added, errs = writ_result(out)
        for e in errs:
            if is_dup(e):
                self.run.dup(kind, f"session {self.n} op {self.i}: {e}")
            else:
                self.run.oops(f"session {self.n} op {self.i} ({kind}): {e}")
        return added

    def subjects(self, kind, k):
        return [f"{kind} s{self.n} p{self.run.phase} o{self.i} k{j}" for j in range(k)]

    # the operations: each returns [(tenant, conversation, [(id, subject)])] committed

    def writ_add(self, rnd, tenant):
        conv = rnd.choice(["shared", f"own-{self.n}"])
        out = []
        with self.conn.transaction():
            cur = self.conn.cursor()
            self.context(cur, tenant, conv)
            for k, subject in enumerate(self.subjects("writ_add", rnd.choice([1, 1, 1, 2, 3]))):
                if k:
                    cur.execute("SELECT pg_sleep(%s)", (rnd.random() * 0.01,))
                out += self.writ(cur, "writ_add", f"/todo add {subject}")
        return [(tenant, conv, out)]

    def writ_bulk(self, rnd, tenant):
        conv = f"bulk-{self.n}"
        k = rnd.choices([rnd.randint(2, 10), rnd.randint(11, 40), rnd.randint(41, 199), 200], [5, 3, 2, 1])[0]
        message = "I'll plan this.\n" + "\n".join(f"/todo add {s}" for s in self.subjects("writ_bulk", k))
        with self.conn.transaction():
            cur = self.conn.cursor()
            self.context(cur, tenant, conv)
            added = self.writ(cur, "writ_bulk", message)
        if len(added) != k:
            self.run.oops(f"session {self.n} op {self.i}: a bulk add of {k} added {len(added)}")
        return [(tenant, conv, added)]

    def rest_post(self, rnd, tenant):
        conv = rnd.choice(["shared", f"own-{self.n}"])
        (subject,) = self.subjects("rest_post", 1)
        with self.conn.transaction():
            cur = self.conn.cursor()
            self.context(cur, tenant, conv)
            cur.execute("SELECT todo.rest('POST', '/v1/todos', %s)", (Jsonb({"subject": subject}),))
            r = cur.fetchone()[0]
        if r.get("status") != 201:
            error = str(r.get("body"))
            if is_dup(error):
                self.run.dup("rest_post", f"session {self.n} op {self.i}: {r}")
            else:
                self.run.oops(f"session {self.n} op {self.i} (rest_post): {r}")
            return []
        return [(tenant, conv, [(r["body"]["todo"]["id"], subject)])]

    def import_(self, rnd, tenant):
        conv = f"imp-{self.n}"
        news = self.subjects("import", rnd.randint(0, 6))
        with self.conn.transaction():
            cur = self.conn.cursor()
            self.context(cur, tenant, conv)
            cur.execute("SELECT todo.export_tasks(%s)", (conv,))
            tasks = cur.fetchone()[0]["tasks"]
            kept = [t for t in tasks if rnd.random() < 0.7]
            file = [{"id": t["id"], "title": t["title"], "done": rnd.random() < 0.3} for t in kept]
            cur.execute("SELECT max(id) FROM todo.todos WHERE tenant_id = %s AND conversation_id <> %s", (tenant, conv))
            foreign = cur.fetchone()[0]
            for j, title in enumerate(news):
                # a new task names an id no todo of the conversation has: another's, or none's
                named = {0: str(foreign) if foreign else None, 1: "999999999"}.get(j)
                file.append({"title": title, "done": False, **({"id": named} if named else {})})
            rnd.shuffle(file)
            cur.execute("SELECT todo.import_tasks(%s, %s)", (conv, Jsonb({"tasks": file})))
            after = {t["title"]: int(t["id"]) for t in cur.fetchone()[0]["tasks"]}
        for t in kept:
            if after.get(t["title"]) != int(t["id"]):
                self.run.oops(f"session {self.n} op {self.i}: import kept #{t['id']} {t['title']!r} as {after.get(t['title'])}")
        missing = [s for s in news if s not in after]
        if missing:
            self.run.oops(f"session {self.n} op {self.i}: import lost new tasks {missing}")
        return [(tenant, conv, [(after[s], s) for s in news if s in after])]

    def explicit(self, rnd, tenant):
        """Plain SQL naming an id the counter handed out and no todo ever had: an id a range
        has still to hand out, or a gap; ids ≡ n (mod 8), so two sessions never name one."""
        conv = f"exp-{self.n}"
        (subject,) = self.subjects("explicit", 1)
        try:
            with self.conn.transaction():
                cur = self.conn.cursor()
                self.context(cur, tenant, conv)
                cur.execute("SELECT last_id FROM todo.counters WHERE tenant_id = %s", (tenant,))
                row = cur.fetchone()
                if not row:
                    return []
                cur.execute("SELECT next_id, last_id FROM todo.id_ranges WHERE tenant_id = %s AND next_id <= last_id",
                            (tenant,))
                ranges = cur.fetchall()
                pick = None
                if ranges and rnd.random() < 0.6:
                    lo, hi = rnd.choice(ranges)
                    candidates = [i for i in range(lo, hi + 1) if i % SESSIONS == self.n]
                    pick = rnd.choice(candidates) if candidates else None
                if pick is None:
                    cur.execute("""SELECT g FROM generate_series(1, %s) g
                                    WHERE g %% %s = %s
                                      AND NOT EXISTS (SELECT 1 FROM todo.todos t WHERE t.tenant_id = %s AND t.id = g)
                                      AND NOT EXISTS (SELECT 1 FROM todo.events e WHERE e.tenant_id = %s AND e.todo_id = g)
                                    ORDER BY random() LIMIT 1""", (row[0], SESSIONS, self.n, tenant, tenant))
                    found = cur.fetchone()
                    if not found:
                        return []
                    pick = found[0]
                self.run.stats["explicit " + ("in a range" if ranges and any(lo <= pick <= hi for lo, hi in ranges)
                                              else "a gap")] += 1
                cur.execute("INSERT INTO todo.todos (tenant_id, conversation_id, id, subject) VALUES (%s, %s, %s, %s)"
                            " RETURNING id", (tenant, conv, pick, subject))
                got = cur.fetchone()[0]
        except psycopg.errors.UniqueViolation as e:
            # legitimate only when a concurrent add took the id first (it held the range):
            # that add's todo is there now, or was (an import deleted it since: ids are never
            # reused), and it is not ours
            with self.conn.transaction():
                cur = self.conn.cursor()
                self.context(cur, tenant, conv)
                cur.execute("SELECT subject FROM todo.todos WHERE tenant_id = %s AND id = %s", (tenant, pick))
                other = cur.fetchone()
                if other is None and "never reused" in str(e):
                    cur.execute("SELECT changes->>'subject' FROM todo.events WHERE tenant_id = %s AND todo_id = %s"
                                " AND action = 'insert'", (tenant, pick))
                    other = cur.fetchone()
            if other and other[0] != subject and not other[0].startswith("explicit "):
                with self.run.lock:
                    self.run.named_taken.append((tenant, pick, other[0]))
                return []
            self.run.dup("explicit", f"session {self.n} op {self.i}: #{pick}: {e} (the row: {other})")
            return []
        return [(tenant, conv, [(got, subject)])]

    def abort(self, rnd, tenant):
        conv = f"own-{self.n}"
        if rnd.random() < 0.5:
            # adds (a writ, a bulk writ, a REST add), then ROLLBACK: nothing stays
            with self.conn.transaction():
                cur = self.conn.cursor()
                self.context(cur, tenant, conv)
                k = rnd.choice([1, 2, 5, 33, 120])
                self.writ(cur, "abort", "\n".join(f"/todo add {s}" for s in self.subjects("abort", k)))
                if rnd.random() < 0.5:
                    cur.execute("SELECT todo.rest('POST', '/v1/todos', %s)", (Jsonb({"subject": "rolled back"}),))
                    r = cur.fetchone()[0]
                    if r.get("status") != 201 and is_dup(str(r)):
                        self.run.dup("abort", f"session {self.n} op {self.i}: {r}")
                    elif r.get("status") != 201:
                        self.run.oops(f"session {self.n} op {self.i} (abort): {r}")
                raise psycopg.Rollback()
            return []
        # adds in a savepoint rolled back, then adds committed
        with self.conn.transaction():
            cur = self.conn.cursor()
            self.context(cur, tenant, conv)
            with self.conn.transaction():
                self.writ(cur, "abort", "\n".join(f"/todo add {s} (rolled back)"
                                                  for s in self.subjects("abort", rnd.choice([1, 3, 40]))))
                raise psycopg.Rollback()
            kept = self.writ(cur, "abort", "\n".join(f"/todo add {s}"
                                                     for s in self.subjects("abort", rnd.choice([1, 2, 7]))))
        return [(tenant, conv, kept)]

    def one(self, rnd):
        kind = rnd.choices(KINDS, WEIGHTS)[0]
        tenant = rnd.choices(TENANTS, TENANT_WEIGHTS)[0]
        if kind == "reconnect":
            self.reopen()
            return kind, []
        fn = {"import": self.import_}.get(kind) or getattr(self, kind)
        for attempt in range(10):
            try:
                return kind, fn(rnd, tenant)
            except psycopg.errors.UniqueViolation as e:
                self.run.dup(kind, f"session {self.n} op {self.i}: {e}")
                return kind, []
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                self.run.stats["retried"] += 1
                time.sleep(rnd.random() * 0.01)
            except psycopg.OperationalError as e:
                if not (self.conn.broken or self.conn.closed):
                    raise
                raise Lost(f"{type(e).__name__}: {e}") from e
        raise RuntimeError("gave up after 10 retries")

    def run_phase(self, phase, ops):
        rnd = random.Random(f"{SEED}-{self.n}-{phase}")
        for _ in range(ops):
            self.i += 1
            try:
                kind, results = self.one(rnd)
                for tenant, conv, added in results:
                    self.run.committed(tenant, kind, conv, added)
                with self.run.lock:
                    self.run.stats[kind] += 1
                    self.run.done_in_phase += 1
                    if self.run.restarted_at is not None:
                        self.run.after_restart += 1
            except Lost as e:
                with self.run.lock:
                    self.run.lost.append((self.opened, f"session {self.n} op {self.i}: {e}"))
                self.reopen()
            except Exception as e:  # noqa: BLE001 - every failure is reported
                if self.conn.broken or self.conn.closed:
                    # cut by the restart where psycopg raised something else (a failed rollback)
                    with self.run.lock:
                        self.run.lost.append((self.opened, f"session {self.n} op {self.i}: {type(e).__name__}: {e}"))
                elif isinstance(e, psycopg.Error) and is_dup(str(e)):
                    self.run.dup("other", f"session {self.n} op {self.i}: {e}")
                else:
                    self.run.oops(f"session {self.n} op {self.i}: {type(e).__name__}: {e}\n"
                                  + traceback.format_exc(limit=3))
                if self.conn.closed or self.conn.broken:
                    self.reopen()


def overlapping(ranges, counters):
    """What the old refill left: two ranges of a tenant that would hand out one id, or a
    range past the tenant's counter. `ranges`: (tenant, slot, next_id, last_id)."""
    found = []
    by_tenant = defaultdict(list)
    for tenant, slot, nxt, last in ranges:
        if nxt <= last:
            by_tenant[tenant].append((slot, nxt, last))
            if last > counters.get(tenant, 0):
                found.append(f"{tenant}: range {slot} ({nxt}-{last}) past the counter {counters.get(tenant)}")
    for tenant, rs in by_tenant.items():
        rs.sort()
        for a in range(len(rs)):
            for b in range(a + 1, len(rs)):
                (sa, na, la), (sb, nb, lb) = rs[a], rs[b]
                if na <= lb and nb <= la:
                    found.append(f"{tenant}: ranges {sa} ({na}-{la}) and {sb} ({nb}-{lb}) overlap")
    return found


class Monitor(threading.Thread):
    """A superuser polling the tenants' ranges: refills (a range's last id moves), empty
    ranges at once, and overlaps (which no committed state may ever show)."""

    def __init__(self, cluster, db, tenants):
        super().__init__(daemon=True)
        self.cluster, self.db, self.tenants = cluster, db, tenants
        self.stop = threading.Event()
        self.seen = {}                    # (tenant, slot) -> last_id
        self.refills = Counter()          # tenant -> refills seen
        self.slots = Counter()            # tenant -> most ranges seen
        self.max_empty = Counter()        # tenant -> most empty ranges seen at once
        self.overlaps = []
        self.polls = 0

    def run(self):
        conn = None
        while not self.stop.is_set():
            try:
                if conn is None or conn.closed:
                    conn = self.cluster.connect(self.db, connect_timeout=5)
                # the ranges first: a counter read after them is never behind them
                ranges = conn.execute("SELECT tenant_id, slot, next_id, last_id FROM todo.id_ranges "
                                      "WHERE tenant_id = ANY(%s)", (self.tenants,)).fetchall()
                counters = dict(conn.execute("SELECT tenant_id, last_id FROM todo.counters WHERE tenant_id = ANY(%s)",
                                             (self.tenants,)).fetchall())
            except psycopg.Error:
                conn = None
                time.sleep(0.2)
                continue
            self.polls += 1
            empty = Counter()
            per_tenant = Counter()
            for tenant, slot, nxt, last in ranges:
                per_tenant[tenant] += 1
                if nxt > last:
                    empty[tenant] += 1
                before = self.seen.get((tenant, slot))
                if before is not None and before != last:
                    self.refills[tenant] += 1
                self.seen[(tenant, slot)] = last
            for t, k in per_tenant.items():
                self.slots[t] = max(self.slots[t], k)
            for t, k in empty.items():
                self.max_empty[t] = max(self.max_empty[t], k)
            found = overlapping(ranges, counters)
            if found:
                self.overlaps.append(found)
            time.sleep(0.01)
        if conn is not None:
            conn.close()


# The refill of an emptied range up to 0.9.0 (src/store/ids.rs before 0.9.1), and since: on a
# tenant with two empty ranges, planned generic, the old one refills both with the same ids.
OLD_REFILL = """UPDATE todo.id_ranges r SET next_id = $2, last_id = $3
  FROM (SELECT f.slot FROM todo.id_ranges f WHERE f.tenant_id = $1 AND f.next_id > f.last_id
         ORDER BY f.slot LIMIT 1 FOR UPDATE SKIP LOCKED) s
 WHERE r.tenant_id = $1 AND r.slot = s.slot RETURNING r.slot"""
NEW_REFILL = """UPDATE todo.id_ranges r SET next_id = $2, last_id = $3
 WHERE r.tenant_id = $1
   AND r.slot = (SELECT f.slot FROM todo.id_ranges f WHERE f.tenant_id = $1 AND f.next_id > f.last_id
                  ORDER BY f.slot LIMIT 1 FOR UPDATE SKIP LOCKED)
 RETURNING r.slot"""


def probe_refills(cluster, db, tenants):
    """Each tenant's empty ranges now, and how many ranges the old and the current refill
    statement refill at once on this layout (generic plans, as a superuser, rolled back)."""
    found = {}
    with cluster.connect(db) as conn:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE old_refill(text, bigint, bigint) AS {OLD_REFILL}")
        conn.execute(f"PREPARE new_refill(text, bigint, bigint) AS {NEW_REFILL}")
        for t in tenants:
            empty = conn.execute("SELECT count(*) FROM todo.id_ranges WHERE tenant_id = %s AND next_id > last_id",
                                 (t,)).fetchone()[0]
            counts = []
            for name in ("old_refill", "new_refill"):
                with conn.transaction():
                    rows = conn.execute(psycopg.sql.SQL("EXECUTE {}({}, 1000000000, 1000000031)").format(
                        psycopg.sql.Identifier(name), psycopg.sql.Literal(t))).fetchall()
                    counts.append(len(rows))
                    raise psycopg.Rollback()
            found[t] = (empty, *counts)
    return found


def add_fillers(cluster, db, first, count):
    """`count` more tenants, each adding one todo (one id range each), as agent_login."""
    cluster.psql(f"INSERT INTO todo.tenants (tenant_id) SELECT 'filler-' || g FROM generate_series({first}, "
                 f"{first + count - 1}) g", db=db)
    with cluster.connect(db, user="agent_login") as conn:
        conn.execute(f"""DO $$
BEGIN
    FOR g IN {first}..{first + count - 1} LOOP
        PERFORM todo.set_context('filler-' || g, 'c', 'filler');
        PERFORM todo.todo_writ('/todo add filler ' || g);
    END LOOP;
END $$""")


def analyze(cluster, db):
    cluster.psql("ANALYZE todo.id_ranges; ANALYZE todo.counters; ANALYZE todo.todos;", db=db)


def verify(cluster, db):
    return cluster.psql("SELECT tenant_id, todo_id, problem FROM todo.verify()", db=db).strip()


def test_sessions_never_hand_out_an_id_twice(new_cluster):
    print(f"\nids: seed {SEED} (PGTODOS_IDS_SEED={SEED} replays it), {SESSIONS} sessions x {OPS} operations")
    start = time.time()
    cluster = new_cluster("ids")
    db = cluster.database("ids", tenants=TENANTS)
    add_fillers(cluster, db, 1, FILLERS)
    analyze(cluster, db)
    setup = time.time() - start

    run = Run(cluster, db)
    sessions = [Session(run, n) for n in range(SESSIONS)]
    monitor = Monitor(cluster, db, TENANTS)
    monitor.start()
    per_phase = max(1, OPS // PHASES)
    phase_times = []
    probes = []
    for phase in range(1, PHASES + 1):
        t0 = time.time()
        run.phase, run.done_in_phase = phase, 0
        threads = [threading.Thread(target=s.run_phase, args=(phase, per_phase)) for s in sessions]
        for t in threads:
            t.start()
        if phase == RESTART_PHASE:
            # halfway through the phase the server stops as if it crashed, and starts again
            while run.done_in_phase < SESSIONS * per_phase // 2 and any(t.is_alive() for t in threads):
                time.sleep(0.05)
            done = run.done_in_phase
            cluster.stop("immediate")
            cluster.start()
            run.restart_done = time.time()
            run.restarted_at = done
        for t in threads:
            t.join()
        phase_times.append(time.time() - t0)
        problems = verify(cluster, db)
        seeded(f"phase {phase}: todo.verify() finds nothing", not problems, problems[:2000])
        if phase == 2:
            add_fillers(cluster, db, FILLERS + 1, MORE_FILLERS)
        analyze(cluster, db)
        probes.append(probe_refills(cluster, db, TENANTS))
    monitor.stop.set()
    monitor.join()
    for s in sessions:
        s.close()

    # no 23505, by kind of call; nothing else unexpected
    for kind in ADD_KINDS + ["other"]:
        seeded(f"no {kind} call failed with 23505 (duplicate key)", not run.dups[kind],
               f"{len(run.dups[kind])} failed: {run.dups[kind][:5]}")
    seeded("no other call failed unexpectedly", not run.unexpected,
           f"{len(run.unexpected)}: {run.unexpected[:5]}")
    lost_elsewhere = [x for opened, x in run.lost if run.restart_done is None or opened > run.restart_done]
    seeded("only connections opened before the cluster's restart were lost", not lost_elsewhere, lost_elsewhere[:5])
    seeded("the cluster restarted mid-phase and sessions went on after it", run.after_restart > SESSIONS,
           f"restarted after {run.restarted_at} of {SESSIONS * per_phase} operations, {run.after_restart} after")

    # every id a committed add returned: once per tenant, and the todo with it is that add's
    repeated, wrong = [], []
    with cluster.connect(db) as admin:
        for tenant in TENANTS:
            ids = Counter(i for i, _, _, _ in run.ledger[tenant])
            repeated += [(tenant, i, n) for i, n in ids.items() if n > 1]
            rows = dict(admin.execute("SELECT id, subject FROM todo.todos WHERE tenant_id = %s", (tenant,)).fetchall())
            for i, subject, kind, conv in run.ledger[tenant]:
                # an import deletes the tasks its file leaves out
                if kind != "import" and rows.get(i) != subject:
                    wrong.append((tenant, i, subject, rows.get(i)))
        twice = admin.execute("""SELECT tenant_id, todo_id, count(*) FROM todo.events WHERE action = 'insert'
                                  GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 10""").fetchall()
        total, distinct = admin.execute("SELECT count(*), count(DISTINCT (tenant_id, id)) FROM todo.todos").fetchone()
        slots = dict(admin.execute("SELECT tenant_id, count(*) FROM todo.id_ranges WHERE tenant_id = ANY(%s) "
                                   "GROUP BY 1", (TENANTS,)).fetchall())
        in_table = admin.execute("SELECT count(*) FROM todo.id_ranges").fetchone()[0]
        todos = dict(admin.execute("SELECT tenant_id, count(*) FROM todo.todos WHERE tenant_id = ANY(%s) GROUP BY 1",
                                   (TENANTS,)).fetchall())
    added = sum(len(v) for v in run.ledger.values())
    seeded("every id a committed add returned is unique per tenant", not repeated, repeated[:10])
    seeded("every todo a committed add returned has its id and subject", not wrong, f"{len(wrong)}: {wrong[:10]}")
    seeded("no id of a tenant has two insert events", not twice, twice)
    seeded("ids are unique per tenant in todo.todos", total == distinct, (total, distinct))
    problems = verify(cluster, db)
    seeded("todo.verify() finds nothing at the end", not problems, problems[:2000])

    # the run did what could break: refills, several ranges, two empty at once, no overlap seen
    seeded("the run added todos of every kind",
           all(run.stats[k] for k in KINDS) and all(any(k == kind for v in run.ledger.values() for _, _, k, _ in v)
                                                    for kind in ADD_KINDS),
           dict(run.stats))
    seeded("ranges were refilled (a range's last id moved)", sum(monitor.refills.values()) > 0, dict(monitor.refills))
    seeded("some tenant ended with more than one id range", max(slots.values(), default=0) > 1, slots)
    seeded("two of a tenant's ranges were empty at once (the layout that broke)",
           max(monitor.max_empty.values(), default=0) >= 2, dict(monitor.max_empty))
    seeded("the monitor never saw two ranges overlap, or a range past its counter", not monitor.overlaps,
           monitor.overlaps[:3])
    seeded("the ranges table holds the filler tenants' ranges", in_table > FILLERS + MORE_FILLERS, in_table)
    # on this run's layout (after each phase, fresh statistics) the refill up to 0.9.0 gives
    # two empty ranges the same ids; the current one refills one
    seeded("after some phase, the old refill statement refilled two ranges at once (the run could meet the bug)",
           any(old > 1 for p in probes for _, old, _ in p.values()), probes)
    seeded("the current refill statement refilled one range every time there was one",
           all(new == min(empty, 1) for p in probes for empty, _, new in p.values()), probes)

    elapsed = time.time() - start
    print(f"ids: seed {SEED}; {elapsed:.1f} s (setup {setup:.1f} s, phases "
          + ", ".join(f"{t:.1f}" for t in phase_times) + " s)")
    print("ops: " + ", ".join(f"{k} {run.stats[k]}" for k in KINDS)
          + f"; explicit in a range {run.stats['explicit in a range']}, a gap {run.stats['explicit a gap']}"
          + f"; retried {run.stats['retried']}; named ids another add took first {len(run.named_taken)}")
    print(f"adds committed: {added}; todos per tenant {todos}; ranges per tenant {slots}; "
          f"refills seen {dict(monitor.refills)}; most ranges {dict(monitor.slots)}; "
          f"most empty at once {dict(monitor.max_empty)}; monitor polls {monitor.polls}")
    print("empty ranges, ranges the old and the current refill would refill, per tenant after each phase: "
          + "; ".join(str(p) for p in probes))
    print(f"restart after {run.restarted_at} operations of phase {RESTART_PHASE}; transactions cut: {len(run.lost)}")


def test_the_checks_see_ranges_that_collide(cluster):
    """The state the old refill left, built directly: two ranges handing out ids 66 to 96.
    todo.verify() reports it, the monitor's check sees it, and two sessions adding through
    the stateful run's own code meet the 23505 it would count."""
    db = cluster.database("ids_broken", tenants=["broken"])
    cluster.psql("""
INSERT INTO todo.counters (tenant_id, last_id) VALUES ('broken', 96);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('broken', 1, 66, 96), ('broken', 2, 66, 96);
""", db=db)
    problems = verify(cluster, db)
    check("todo.verify() reports two ranges that would hand out the same ids",
          "id ranges 1 and 2 would both hand out ids 66 to 96" in problems, problems)
    rows = cluster.psql("SELECT tenant_id, slot, next_id, last_id FROM todo.id_ranges", db=db)
    ranges = [(t, int(s), int(a), int(b)) for t, s, a, b in (r.split("|") for r in rows.split())]
    seen = overlapping(ranges, {"broken": 96})
    check("the monitor's check sees the overlap", seen == ["broken: ranges 1 (66-96) and 2 (66-96) overlap"], seen)
    seen = overlapping([("broken", 1, 90, 120)], {"broken": 96})
    check("the monitor's check sees a range past the counter", len(seen) == 1 and "past the counter" in seen[0], seen)

    run = Run(cluster, db)
    a, b = Session(run, 0), Session(run, 2)
    a.i = b.i = 1
    results = {}
    with a.conn.transaction():
        cur = a.conn.cursor()
        a.context(cur, "broken", "c")
        first = a.writ(cur, "writ_add", "/todo add holds range 1")

        def second():
            try:
                with b.conn.transaction():
                    cur = b.conn.cursor()
                    b.context(cur, "broken", "c")
                    results["b"] = b.writ(cur, "writ_add", "/todo add takes range 2")
            except Exception as e:  # noqa: BLE001
                results["b"] = e
        t = threading.Thread(target=second)
        t.start()
        # b takes the other range (a holds the first), gets the same id, and waits for a's row
        deadline = time.time() + 20
        waiting = False
        while time.time() < deadline and not waiting:
            waiting = cluster.psql(f"SELECT count(*) FROM pg_stat_activity WHERE pid = {b.conn.info.backend_pid} "
                                   "AND wait_event_type = 'Lock'").strip() == "1"
            time.sleep(0.05)
    t.join(30)
    check("the first add took id 66 of range 1", [i for i, _ in first] == [66], first)
    check("the second session waited for the first's row with the same id", waiting)
    check("the second add failed with 23505, counted as the stateful run counts it",
          len(run.dups["writ_add"]) == 1 and "duplicate key" in run.dups["writ_add"][0], (run.dups, results))
    a.close()
    b.close()
