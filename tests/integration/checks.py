"""The one way a test reports a step: `check(name, ok, detail)`. A test may make many checks;
each is counted (bin/test's totals count checks), printed as `ok: name` or `FAILED: name
detail`, and a test with a failed check fails at its end, naming every failed check, after
running all of them (a failure does not hide the checks after it). Outside pytest (a script
run by hand) a check only prints and counts."""
import os
import sys

counts = {"passed": 0, "failed": 0}
# the checks of the test running now: (name, ok, detail); conftest.py resets it per test
current = []


def check(name, ok, detail=""):
    ok = bool(ok)
    counts["passed" if ok else "failed"] += 1
    current.append((name, ok, detail))
    print(f"ok: {name}" if ok else f"FAILED: {name} {detail}", flush=True)
    return ok


def summary():
    """For scripts run by hand: the counts, and exit 1 when anything failed."""
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)


def need(ok, what):
    """A test (or a fixture, of any scope) that needs something optional — Citus's source,
    chromium — and `ok` says whether it is there: skipped saying `what` is missing, or failed
    under CI=true (where nothing may be skipped)."""
    import pytest

    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"missing under CI=true: {what}")
        pytest.skip(what)
