#!/usr/bin/env bash
# The Citus tier's multi-session checks (tests/citus.py) in a fresh distributed database
# "multi" of the cluster bin/test-citus started (its libpq environment and newdb come from it).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
newdb multi
psql -X -q -v ON_ERROR_STOP=1 -d multi >/dev/null <<'SQL'
-- roles belong to the cluster: the regress step may have made it already
SELECT 'CREATE ROLE agent_login LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent_login') \gexec
SELECT todo.grant_usage('agent_login');
SELECT todo.distribute();
SQL
python3 tests/citus.py multi
