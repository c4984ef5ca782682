#!/usr/bin/env bash
# abuse_roles: tests/abuse_roles.py against a throwaway cluster with two tenants, the service
# role agent_login and an agent's role bound to acme, behind pgbouncer in transaction pooling
# (one server connection, so consecutive clients share it).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_ABUSE_PORT:-54334}
BOUNCER_PORT=${PGTODOS_ABUSE_BOUNCER_PORT:-54335}
. bin/lib/throwaway.sh
command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || { echo "abuse_roles: pgbouncer is not installed (bin/setup installs it)" >&2; exit 1; }
throwaway abuse "$PORT"
createdb abuse
agent_database abuse acme globex
psql -X -q -v ON_ERROR_STOP=1 -d abuse >/dev/null <<'SQL'
CREATE ROLE agent_acme LOGIN;
SELECT todo.grant_usage('agent_acme', 'acme', plain_sql => false);
BEGIN;
SELECT todo.set_context('acme', 'a-1');
INSERT INTO todo.todos (subject) VALUES ('acme one');
SELECT todo.set_context('globex', 'g-0');
INSERT INTO todo.todos (subject) VALUES ('globex secret');
COMMIT;
SQL

# pgbouncer refuses to run as root: as postgres then, like the cluster
dir=$REPO/.cluster/abuse-bouncer
rm -rf "$dir"; mkdir -p "$dir"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
abuse = host=$PGHOST port=$PORT dbname=abuse
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
default_pool_size = 1
max_client_conn = 20
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
printf '"agent_login" ""\n' >"$dir/users.txt"
if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; run=(sudo -u postgres --); else run=(); fi
"${run[@]}" "$(command -v pgbouncer || echo /usr/sbin/pgbouncer)" -d "$dir/pgbouncer.ini"
stop_bouncer() { kill "$(cat "$dir/pgbouncer.pid" 2>/dev/null)" 2>/dev/null || true; bin/cluster stop abuse; }
trap stop_bouncer EXIT
for _ in $(seq 50); do [ -f "$dir/pgbouncer.pid" ] && break; sleep 0.1; done

python3 tests/abuse_roles.py abuse "$BOUNCER_PORT"
