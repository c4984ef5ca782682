#!/usr/bin/env bash
# context_cost: what each surface costs a model in context: the bytes (and tokens, estimated as
# bytes / 4) of each dialect's tools/list, of every dialect's, and of the writ's instruction
# text (docs/writ.md) and `/todo help` answer, from the extension installed in the PostgreSQL
# bin/lib/pg.sh finds (bin/install first to measure this checkout's), in a throwaway cluster
# .cluster/contextcost on its Unix socket, as a plain role. Nothing is timed, so nothing is
# built in release mode. Prints a Markdown table (bench/context_cost.py); docs/writ.md keeps it.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
. bin/lib/throwaway.sh
throwaway contextcost
createdb contextcost
agent_database contextcost acme
PGUSER=agent_login python3 bench/context_cost.py contextcost acme
