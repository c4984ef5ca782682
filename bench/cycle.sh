#!/usr/bin/env bash
# cycle: the cycle check of todo.dependencies on graphs with very many paths (0.8.0 listed
# the paths: 1.56 s at 18 layers of a ladder, 31.5 s at 22). Builds in release mode, starts a
# throwaway cluster (.cluster/cycle, on its Unix socket) and times, on
# ladders of the given numbers of layers (two todos a layer, each waiting for both todos of
# the layer before) and on a band of CYCLE_EDGES edges (each todo waiting for the five just
# below it; bench/cycle.sql builds both):
#   - closing a cycle (the bottom made to wait for the top), through the writ
#     (`/todo block`) and as a plain INSERT into todo.dependencies (the row trigger);
#   - adding an edge that closes none (a free todo made to wait for the top: the search
#     covers the whole graph), the same two ways.
# Each statement runs CYCLE_RUNS times (default 5), each in a subtransaction rolled back
# after it; the median in ms. A statement that exceeds CYCLE_TIMEOUT (statement_timeout,
# default 120s) is reported as such. Prints a Markdown table and writes it as the "Cycle
# check" section of bench/results.md (bench/report.py).
# Usage: bench/cycle.sh [layers ...]   (default: 10 18 22)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
RUNS=${CYCLE_RUNS:-5}
EDGES=${CYCLE_EDGES:-10000}
TIMEOUT=${CYCLE_TIMEOUT:-120s}
layers=("$@"); [ ${#layers[@]} -gt 0 ] || layers=(10 18 22)
[ $((EDGES % 5)) -eq 0 ] || { echo "CYCLE_EDGES must be a multiple of 5" >&2; exit 2; }

echo "==> building pg_todos in release mode" >&2
bin/install --release
. bin/lib/throwaway.sh
throwaway cycle
createdb cycle
psql -X -q -v ON_ERROR_STOP=1 -d cycle -c "CREATE EXTENSION pg_todos" -f bench/cycle.sql

# cell TENANT EXPECTED STATEMENT: the median ms, with the outcome when it is not EXPECTED
cell() {
  local out
  out=$(psql -X -q -At -v ON_ERROR_STOP=1 -d cycle -c "SET statement_timeout = '$TIMEOUT'" \
    -c "SELECT ms || '|' || outcome FROM bench.timed('$1', \$q\$$3\$q\$, $RUNS)" 2>&1) \
    || { out=${out#*ERROR:  }; echo "> $TIMEOUT (${out%%$'\n'*})"; return; }
  case "${out#*|}" in
    "$2"*) echo "${out%%|*}" ;;
    *) echo "${out%%|*} (${out#*|})" ;;
  esac
}

# row TENANT LABEL EDGES PATHS BOTTOM TOP FREE: one table row
row() {
  local t=$1 close_writ close_sql free_writ free_sql
  echo "==> $2" >&2
  close_writ=$(cell "$t" refused "SELECT todo.todo_writ('/todo block $5 on $6')")
  close_sql=$(cell "$t" refused "INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('$t', $5, $6) RETURNING 'ok'")
  free_writ=$(cell "$t" accepted "SELECT todo.todo_writ('/todo block $7 on $6')")
  free_sql=$(cell "$t" accepted "INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('$t', $7, $6) RETURNING 'ok'")
  echo "| $2 | $3 | $4 | $close_writ | $close_sql | $free_writ | $free_sql |"
}

version=$(bin/version)
table=$(mktemp)
{
  echo "| graph | edges | paths from top to bottom | closing a cycle: writ | closing a cycle: SQL | no cycle: writ | no cycle: SQL |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for n in "${layers[@]}"; do
    psql -X -q -At -v ON_ERROR_STOP=1 -d cycle -c "SELECT bench.ladder('ladder$n', $n)" >/dev/null
    row "ladder$n" "ladder, $n layers" $((4 * (n - 1))) "2^$((n - 1))" 1 $((2 * n - 1)) $((2 * n + 1))
  done
  top=$((EDGES / 5 + 5))
  psql -X -q -At -v ON_ERROR_STOP=1 -d cycle -c "SELECT bench.band('band', $EDGES)" >/dev/null
  # the number of paths from the top down to #1: each todo from #6 up waits for the five below
  paths=$(python3 -c "
import math
f = [0, 1, 0, 0, 0, 0]
for i in range(6, $top + 1):
    f.append(sum(f[i - s] for s in range(1, 6) if i - s >= 1))
print('about 10^%d' % int(math.log10(f[$top])))")
  row band "band of $top todos" "$EDGES" "$paths" 1 "$top" $((top + 1))
} | tee "$table"

section=$(mktemp)
{
  echo "## Cycle check: closing a cycle and adding an edge on graphs with many paths ($version)"
  echo
  echo "\`bench/cycle.sh ${layers[*]}\` (CYCLE_EDGES=$EDGES), $(date +%F), release build, median of $RUNS runs, in ms:"
  echo
  cat "$table"
  echo
  echo "A ladder has two todos a layer, each waiting for both todos of the layer before; the band,"
  echo "todos each waiting for the five just below them. Closing a cycle: the bottom todo made to"
  echo "wait for the top one, through the writ (\`/todo block\`, one search under the tenant's graph"
  echo "lock) and as a plain \`INSERT INTO todo.dependencies\` (the row trigger's search): refused, with"
  echo "the shortest path in the message. No cycle: a todo that waits for nothing made to wait for the"
  echo "top one: the search covers the whole graph below the top, finds no path, and the edge is"
  echo "added. Each statement runs in a subtransaction rolled back after it."
} >"$section"
python3 bench/report.py put "$section"
