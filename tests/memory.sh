#!/usr/bin/env bash
# memory: the inputs that made backends use hundreds of megabytes before the input limits
# (tests/memory.py) are refused or cut, and no backend's peak memory (VmHWM) passes 100 MB.
# A throwaway cluster with shared_buffers = 16MB, so that a backend's peak is mostly its own
# memory, the extension and the plain role agent_login.
# Usage: tests/memory.sh   (port: PGTODOS_MEMORY_PORT, 54326)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_MEMORY_PORT:-54326}
. bin/lib/throwaway.sh
throwaway memory "$PORT"
psql -X -q -d postgres -c "ALTER SYSTEM SET shared_buffers = '16MB'"
bin/cluster stop memory
bin/cluster start memory "$PORT"
createdb memory
agent_database memory
python3 tests/memory.py memory
