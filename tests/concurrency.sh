#!/usr/bin/env bash
# concurrency: runs tests/concurrency.py (8 sessions x 400 operations by default) against a
# throwaway cluster with the extension, two tenants and the plain role agent_login.
# Usage: tests/concurrency.sh [sessions] [operations per session]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_CONCURRENCY_PORT:-54321}
. bin/lib/throwaway.sh
throwaway concurrency "$PORT"
createdb concurrency
agent_database concurrency t1 t2
python3 tests/concurrency.py concurrency "${1:-8}" "${2:-400}"
