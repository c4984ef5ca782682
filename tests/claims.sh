#!/usr/bin/env bash
# claims: runs tests/claims.py (8 agents sharing a pool of 1,000 todos, then the same with
# agents that die mid-lease) against a throwaway cluster with the extension and the plain
# role agent_login. Usage: tests/claims.sh [agents] [todos]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_CLAIMS_PORT:-54323}
. bin/lib/throwaway.sh
throwaway claims "$PORT"
createdb claims
agent_database claims
python3 tests/claims.py claims "${1:-8}" "${2:-1000}"
