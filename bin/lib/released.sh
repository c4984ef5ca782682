# shellcheck shell=bash
# Sourced by the scripts that need the released versions (from the repository's root):
#   RELEASED: the versions with a frozen install script sql/pg_todos--X.Y.Z.sql, in order
#   install_released PG_CONFIG: copies those scripts where PostgreSQL looks for them
#   (cargo pgrx install copies only the current version's and the upgrade scripts)
RELEASED=$(printf '%s\n' sql/pg_todos--*.sql | sed -n 's|^sql/pg_todos--\([0-9]*\.[0-9]*\.[0-9]*\)\.sql$|\1|p' \
  | sort -t. -k1,1n -k2,2n -k3,3n | tr '\n' ' ')
install_released() {
  local v
  for v in $RELEASED; do cp "sql/pg_todos--$v.sql" "$("$1" --sharedir)/extension/"; done
}
