#!/usr/bin/env bash
# What per-tenant id allocation costs under concurrent inserts. pgbench, -M prepared, as the
# plain role bench_agent (so row-level security is in the path), synchronous_commit off:
#   one_tenant  : every client inserts into the same tenant (all meet on one counter row)
#   own_tenant  : each client inserts into its own tenant (no shared counter row)
#   plain_txn   : the same transaction (BEGIN, set_config, INSERT, COMMIT) into an equivalent
#                 plain table with a bigserial id: no counter, trigger, event log or RLS
#   plain_insert: a bare INSERT into that table, one statement (the floor)
# Usage: bench/id_allocation.sh [clients] [seconds]   (defaults: 8 clients, 15 s)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
CLIENTS=${1:-8}
SECONDS_PER_RUN=${2:-15}

bin/setup >/dev/null
. bin/lib/pg.sh
pg_need "$PGBENCH"
bin/install --release
. bin/lib/throwaway.sh
throwaway bench
psql -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
ALTER SYSTEM SET synchronous_commit = off;
SELECT pg_reload_conf();
CREATE DATABASE bench;
CREATE ROLE bench_agent LOGIN;
SQL
psql -X -q -v ON_ERROR_STOP=1 -d bench <<SQL
CREATE EXTENSION pg_todos;
SELECT todo.grant_usage('bench_agent');
INSERT INTO todo.tenants SELECT 't' || g FROM generate_series(1, $CLIENTS) g;
CREATE TABLE public.plain_todos (LIKE todo.todos INCLUDING DEFAULTS);
ALTER TABLE public.plain_todos DROP COLUMN id, ADD COLUMN id bigserial;
ALTER TABLE public.plain_todos ALTER tenant_id DROP DEFAULT, ALTER conversation_id DROP DEFAULT,
  ALTER agent_id DROP DEFAULT, ALTER turn_id DROP DEFAULT, ALTER position DROP NOT NULL;
ALTER TABLE public.plain_todos ADD PRIMARY KEY (tenant_id, id);
GRANT INSERT ON public.plain_todos TO bench_agent;
GRANT USAGE ON SEQUENCE public.plain_todos_id_seq TO bench_agent;
SQL
work=$(mktemp -d)
cat >"$work/one_tenant.sql" <<'SQL'
BEGIN;
SELECT set_config('todo.tenant', 't1', true);
INSERT INTO todo.todos (conversation_id, subject) VALUES ('c1', 'benchmark todo');
COMMIT;
SQL
cat >"$work/own_tenant.sql" <<'SQL'
\set t :client_id + 1
BEGIN;
SELECT set_config('todo.tenant', 't' || :t, true);
INSERT INTO todo.todos (conversation_id, subject) VALUES ('c1', 'benchmark todo');
COMMIT;
SQL
cat >"$work/plain_txn.sql" <<'SQL'
BEGIN;
SELECT set_config('todo.tenant', 't1', true);
INSERT INTO public.plain_todos (tenant_id, conversation_id, subject) VALUES ('t1', 'c1', 'benchmark todo');
COMMIT;
SQL
cat >"$work/plain_insert.sql" <<'SQL'
INSERT INTO public.plain_todos (tenant_id, conversation_id, subject) VALUES ('t1', 'c1', 'benchmark todo');
SQL
printf '| script | clients | tps | avg latency (ms) |\n|---|---|---|---|\n'
for script in one_tenant own_tenant plain_txn plain_insert; do
  out=$("$PGBENCH" -n -M prepared -U bench_agent -c "$CLIENTS" -j 2 -T "$SECONDS_PER_RUN" -f "$work/$script.sql" bench 2>&1)
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
  printf '| %s | %s | %.0f | %.3f |\n' "$script" "$CLIENTS" "$tps" "$lat"
done
psql -X -At -d bench -c "SELECT 'ids unique per tenant: ' || (count(*) = count(DISTINCT (tenant_id, id))) FROM todo.todos"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(psql -X -At -d bench -c 'SHOW server_version')"
rm -rf "$work"
