#!/usr/bin/env bash
# The Citus tier's update step: a database "upgraded" of the cluster bin/test-citus started
# (its libpq environment and newdb come from it), created and distributed at the previous released
# version; tests/citus_upgrade.py updates it to this version and checks it, then
# tests/citus.py runs the multi-session checks on the updated store.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
to=$(bin/version)
updates=(sql/pg_todos--*--"$to".sql)
[ -f "${updates[0]}" ] || { echo "tests/citus_upgrade.sh: no sql/pg_todos--*--$to.sql" >&2; exit 1; }
from=${updates[0]#sql/pg_todos--}; from=${from%%--*}
newdb upgraded "$from"
psql -X -q -v ON_ERROR_STOP=1 -d upgraded >/dev/null <<'SQL'
-- roles belong to the cluster: an earlier step may have made it already
SELECT 'CREATE ROLE agent_login LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent_login') \gexec
SQL
python3 tests/citus_upgrade.py upgraded "$from" "$to"
python3 tests/citus.py upgraded
