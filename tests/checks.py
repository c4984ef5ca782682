"""The one way the Python tests report: `check(name, ok, detail)` prints `ok: name` or
`FAILED: name detail` and counts; `summary()` prints `N passed, N failed` (the line bin/test
adds up) and exits 1 when anything failed."""
import sys

counts = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    if ok:
        counts["passed"] += 1
        print(f"ok: {name}")
    else:
        counts["failed"] += 1
        print(f"FAILED: {name} {detail}")


def summary():
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)
