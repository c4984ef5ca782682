"""bench/instructions' measuring half: with the server running under callgrind (each backend
writes OUT/cg.<pid> when it exits), runs each script of bench/run's comparisons with pgbench
(one client, -M prepared, a fixed random seed) K1 and K2 transactions in two connections, each
just after a VACUUM of the database, and
prints, as a Markdown section, the instructions per operation: (backend instructions of the
K2 run - those of the K1 run) / (K2 - K1), and each baseline's count / ours (above 1.0: ours
costs fewer instructions). Usage: python3 bench/instructions.py OUT K1 K2 DB:TENANTS ..."""
import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
PGBENCH = os.environ.get("PGBENCH")
if not PGBENCH:
    sys.exit("bench/instructions.py: PGBENCH is not set: run bench/instructions, which exports it")
S = "bench/scripts/"
# INSTRUCTIONS_ONLY="writ_add hand_add": only the rows whose scripts are all named
ONLY = os.environ.get("INSTRUCTIONS_ONLY", "").split()
# INSTRUCTIONS_PROFILE=N: also the N functions costing each script most (to stderr)
PROFILE = int(os.environ.get("INSTRUCTIONS_PROFILE") or 0)

# (what, script, baseline or None), the comparisons of bench/run's targets
ROWS = [
    ("writ add", "writ_add", "hand_add"),
    ("REST POST", "rest_post", "hand_add"),
    ("writ start + done + reopen", "writ_cycle", "hand_cycle"),
    ("writ cancel + reopen", "writ_cancel", "hand_cancel"),
    ("REST PATCH ×2", "rest_patch", "hand_patch"),
    ("todolist__set, 10 items", "todolist_set", "hand_replace"),
    ("todowrite, 10 items", "todowrite", "hand_replace"),
    ("claim-next + release", "claim_next", "hand_claim"),
    ("open block", "open_block", "hand_list"),
    ("/todo list", "writ_list", "hand_list"),
    ("writ add vs bare INSERT", "writ_add", "bare_insert"),
]


def vacuum(out, db):
    """VACUUM the database, and wait for that backend's callgrind file: the dead row versions
    the scripts before leave (no autovacuum runs here) would make each script's count depend
    on them."""
    before = set(glob.glob(f"{out}/cg.*"))
    # (no parallel workers: each would end with a callgrind file of its own)
    subprocess.run(["psql", "-X", "-q", "-d", db, "-c", "VACUUM (PARALLEL 0)"], check=True)
    for _ in range(600):
        new = set(glob.glob(f"{out}/cg.*")) - before
        if new and all(summary(f) is not None for f in new):
            return
        time.sleep(0.5)
    sys.exit("bench/instructions.py: the VACUUM's backend wrote no callgrind output")


def backend_instructions(out, db, script, tenants, transactions):
    """The instructions of the one backend that ran `transactions` of `script` (just after a
    VACUUM), and its callgrind file."""
    vacuum(out, db)
    before = set(glob.glob(f"{out}/cg.*"))
    subprocess.run([PGBENCH, "-n", "-M", "prepared", "-U", "bench_agent", "-c", "1", "-t", str(transactions),
                    "--random-seed=1", "-D", f"tenants={tenants}", "-f", S + script + ".sql", db],
                   check=True, capture_output=True, text=True)
    # pgbench opens two connections: one to look at the server, then the client's; each
    # backend writes its file (cg.<pid>) as it exits, just after its connection closes. The
    # client's is the later backend: the larger pid (the larger count is not always it: a
    # cheap script's few transactions can cost less than the first connection's look).
    for _ in range(600):
        new = set(glob.glob(f"{out}/cg.*")) - before
        done = [summary(f) for f in new if summary(f) is not None]
        if len(done) == 2 and len(new) == 2:
            client = max(new, key=lambda f: int(f.rsplit(".", 1)[1]))
            return summary(client), client
        if len(new) > 2:
            sys.exit(f"bench/instructions.py: more than two processes ended during {script}: {sorted(new)}")
        time.sleep(0.5)
    sys.exit(f"bench/instructions.py: no callgrind output of pgbench's two connections for {script}")


def summary(path):
    """The total instructions of a finished callgrind output, or None while it is written."""
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    return int(m[1]) if m else None


def per_operation(out, db, script, tenants, k1, k2):
    (a, fa), (b, fb) = (backend_instructions(out, db, script, tenants, k) for k in (k1, k2))
    if PROFILE:
        print_profile(script, fa, fb, k2 - k1)
    return (b - a) / (k2 - k1)


def inclusive(path):
    """Each function's inclusive instructions in a callgrind file (callgrind_annotate)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(?:\*  )?(\S.*)$", line)
        if m:
            counts[m[2]] = counts.get(m[2], 0) + int(m[1].replace(",", ""))
    return counts


def print_profile(script, k1_file, k2_file, n):
    """The functions with the most inclusive instructions per operation (K2's file minus
    K1's), to stderr: where an operation's instructions go."""
    a, b = inclusive(k1_file), inclusive(k2_file)
    per_op = sorted(((b[f] - a.get(f, 0)) / n, f) for f in b)
    print(f"-- {script}: inclusive instructions per operation, top {PROFILE}", file=sys.stderr)
    for count, f in reversed(per_op[-PROFILE:]):
        print(f"{count:>12,.0f}  {f}", file=sys.stderr)


def main():
    out, k1, k2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dbs = [(d.split(":")[0], int(d.split(":")[1])) for d in sys.argv[4:]]
    rows = [r for r in ROWS if not ONLY or (r[1] in ONLY and r[2] in ONLY)]
    counts = {}
    for db, tenants in dbs:
        for script in sorted({s for _, a, b in rows for s in (a, b) if s}):
            counts[db, script] = per_operation(out, db, script, tenants, k1, k2)
            print(f"{db} {script}: {counts[db, script]:,.0f}", file=sys.stderr)
    print("## Instructions per operation\n")
    print(f"`bench/instructions {k1} {k2}`: instructions one backend executes per transaction of each "
          "script (callgrind; one client, `-M prepared`, `synchronous_commit = off`), the transactions of "
          f"a {k1}-transaction connection subtracted from a {k2}-transaction one. Repeatable: the same build "
          "and data give the same counts whatever else the machine does. Ratio = the baseline's count / "
          "ours (at least the target: met).\n")
    header = "| operation | rows | ours | baseline | ratio |"
    print(header)
    print("|---|---:|---:|---:|---:|")
    for db, _ in dbs:
        size = "10k" if db == "bench_10k" else "1M"
        for what, ours, base in rows:
            a, b = counts[db, ours], counts[db, base]
            print(f"| {what} | {size} | {a:,.0f} | {b:,.0f} ({base}) | {b / a:.2f}× |")
    if len(dbs) > 1 and any(r[1] in ("open_block", "writ_list") for r in rows):
        print("\nScale (cost at 1M rows / cost at 10k rows):\n")
        for what, ours in [("open block", "open_block"), ("/todo list", "writ_list")]:
            print(f"- {what}: {counts['bench_1m', ours] / counts['bench_10k', ours]:.2f}×")


if __name__ == "__main__":
    main()
