# shellcheck shell=bash
# Sourced by the test scripts (from the repository's root). It sources bin/lib/pg.sh, so
# the PostgreSQL found there runs the cluster and its programs (psql, createdb, pg_dump, …)
# come first on the PATH.
. bin/lib/pg.sh

#   throwaway NAME [PORT]
# starts a fresh cluster .cluster/NAME, on its Unix socket only or also on 127.0.0.1:PORT
# (destroying any earlier one of that name),
# stops it when the calling script exits, and exports its libpq environment (PGHOST, PGPORT).
throwaway() {
  bin/cluster destroy "$1"
  bin/cluster start "$1" "${2:-}"
  throwaway_name=$1
  trap 'bin/cluster stop "$throwaway_name"' EXIT
  eval "$(bin/cluster env "$1" "${2:-}")"
}

#   agent_database DB [TENANT ...]
# in the existing database DB: the extension, the plain login role agent_login (no superuser,
# no BYPASSRLS) with what todo.grant_usage gives an app role, and the given tenants.
agent_database() {
  local db=$1; shift
  {
    echo "CREATE EXTENSION pg_todos;"
    echo "CREATE ROLE agent_login LOGIN;"
    echo "SELECT todo.grant_usage('agent_login');"
    for tenant in "$@"; do echo "INSERT INTO todo.tenants VALUES ('$tenant');"; done
  } | psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null
}
