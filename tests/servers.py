"""What the Python tests that start a pg_todos service (`pg_todos mcp`, `pg_todos serve`)
share: the environment the process gets, and stopping it the way an operator would."""
import os
import signal
import subprocess


def libpq_env(db, user="agent_login", **extra):
    """This run's libpq variables (not its own PG_TODOS_* settings, which would change what
    the service does), PATH, HOME and USER; database `db` as `user`; then `extra`."""
    env = {k: v for k, v in os.environ.items()
           if (k.startswith("PG") and not k.startswith("PG_TODOS_")) or k in ("PATH", "HOME", "USER")}
    env.update(PGDATABASE=db, PGUSER=user)
    env.update(extra)
    return env


def stop(proc, timeout=15):
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds; its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
