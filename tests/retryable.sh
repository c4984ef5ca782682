#!/usr/bin/env bash
# retryable: errors that are not the caller's data (statement timeout, cancel, lock timeout,
# deadlock, serialization failure) reach the caller as SQL errors on every surface and commit
# nothing; a claim conflict stays an answer. Runs tests/retryable.py against a throwaway
# cluster with the extension and the plain role agent_login (the tenants are made per check).
# Usage: tests/retryable.sh   (port: PGTODOS_RETRYABLE_PORT, 54331)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_RETRYABLE_PORT:-54331}
. bin/lib/throwaway.sh
throwaway retryable "$PORT"
createdb retryable
agent_database retryable acme
python3 tests/retryable.py retryable
