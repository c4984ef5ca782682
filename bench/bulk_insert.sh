#!/usr/bin/env bash
# One INSERT of many todos (INSERT INTO todo.todos (subject) SELECT … FROM generate_series),
# as the plain role bench_agent (row-level security in the path), each size into a tenant of its
# own, in one run, so the ratios compare like with like on a shared machine. 1.0.0 grew it
# quadratically (10,000 rows 1.25 s, 40,000 15.8 s): each row's id was taken from the tenant's
# id range found by its key, the end of a chain of the row versions the INSERT had written.
# The target: 40,000 rows at most 10× 4,000. Prints a table: rows, seconds (median of RUNS),
# µs per row, and the time against the smallest size's scaled by rows (1.0: linear).
# Usage: bench/bulk_insert.sh [sizes...]   (default: 4000 10000 40000; RUNS=3; BULK_DEBUG=1
# uses the installed debug build instead of building and installing a release one)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(4000 10000 40000)
RUNS=${RUNS:-3}

. bin/lib/pg.sh
[ -n "${BULK_DEBUG:-}" ] || bin/install --release
. bin/lib/throwaway.sh
throwaway bulk
psql -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
ALTER SYSTEM SET synchronous_commit = off;
SELECT pg_reload_conf();
CREATE DATABASE bench;
CREATE ROLE bench_agent LOGIN;
SQL
psql -X -q -v ON_ERROR_STOP=1 -d bench -c "CREATE EXTENSION pg_todos" -c "SELECT todo.grant_usage('bench_agent')" >/dev/null

# one insert of $1 rows into a new tenant; prints its seconds
insert() {
  local tenant="bulk_${1}_$2"
  psql -X -q -v ON_ERROR_STOP=1 -d bench -c "INSERT INTO todo.tenants (tenant_id) VALUES ('$tenant')"
  psql -X -q -At -v ON_ERROR_STOP=1 -U bench_agent -d bench <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
BEGIN;
SELECT set_config('todo.tenant', '$tenant', true) \g /dev/null
\timing on
INSERT INTO todo.todos (conversation_id, subject) SELECT 'c1', 'bulk todo ' || g FROM generate_series(1, $1) g;
\timing off
COMMIT;
SQL
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '| rows | seconds | µs per row | against %s rows, per row |\n|---|---|---|---|\n' "${SIZES[0]}"
base=
for size in "${SIZES[@]}"; do
  ms=$(for run in $(seq 1 "$RUNS"); do insert "$size" "$run"; done | median)
  per_row=$(awk -v ms="$ms" -v n="$size" 'BEGIN {printf "%.1f", ms * 1000 / n}')
  [ -n "$base" ] || base=$per_row
  printf '| %s | %.2f | %s | %.2f |\n' "$size" "$(awk -v ms="$ms" 'BEGIN {print ms / 1000}')" "$per_row" \
    "$(awk -v a="$per_row" -v b="$base" 'BEGIN {print a / b}')"
done
broken=$(psql -X -At -d bench -c "SELECT count(*) FROM todo.verify()")
echo "todo.verify(): $broken problem(s); ids unique per tenant: $(psql -X -At -d bench -c \
  "SELECT count(*) = count(DISTINCT (tenant_id, id)) FROM todo.todos")"
echo "machine: $(nproc) cores, $(psql -X -At -d bench -c 'SHOW server_version')"
