#!/usr/bin/env bash
# tls: TLS to PostgreSQL in both commands. Builds `pg_todos` (cli/), makes a certificate
# authority, a server certificate for localhost, another authority and a client certificate
# with openssl, starts a throwaway cluster that accepts TCP connections only over SSL (and one
# role only with its client certificate), then tests/tls.py runs `pg_todos serve` and
# `pg_todos mcp` against it with each sslmode, and the service over HTTPS with the server's
# certificate (see its docstring).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_TLS_PORT:-54341}
cargo build -p pg_todos_cli >/tmp/pg_todos-tls-build.log 2>&1 || { cat /tmp/pg_todos-tls-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway tls "$PORT"
createdb tls
agent_database tls acme globex
psql -X -q -v ON_ERROR_STOP=1 -d tls -c "CREATE ROLE cert_agent LOGIN; SELECT todo.grant_usage('cert_agent', 'acme', plain_sql => false);" >/dev/null
certs=$(mktemp -d /tmp/pg_todos-tls.XXXXXX)
trap 'bin/cluster stop tls; rm -rf "$certs"' EXIT
ossl() { openssl "$@" >/dev/null 2>&1; }
# the test's authority, the server's certificate (localhost only: 127.0.0.1 is not in it)
ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=pg_todos test CA" -keyout "$certs/ca.key" -out "$certs/ca.crt"
ossl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$certs/server.key" -out "$certs/server.csr"
printf 'subjectAltName=DNS:localhost\n' >"$certs/server.ext"
ossl x509 -req -in "$certs/server.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial -days 2 \
  -extfile "$certs/server.ext" -out "$certs/server.crt"
# another authority, which signed nothing of the server's
ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" -keyout "$certs/other.key" -out "$certs/other.crt"
# a client certificate for the role cert_agent
ossl req -newkey rsa:2048 -nodes -subj "/CN=cert_agent" -keyout "$certs/client.key" -out "$certs/client.csr"
ossl x509 -req -in "$certs/client.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial -days 2 -out "$certs/client.crt"
chmod 600 "$certs"/*.key
chmod 755 "$certs"
data=$(dirname "$PGHOST")/data
cp "$certs/server.crt" "$certs/server.key" "$certs/ca.crt" "$data/"
chown postgres "$data/server.crt" "$data/server.key" "$data/ca.crt"
chmod 600 "$data/server.key"
cat >>"$data/postgresql.conf" <<CONF
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
ssl_ca_file = 'ca.crt'
CONF
cat >"$data/pg_hba.conf" <<HBA
local     all  all                     trust
hostssl   all  cert_agent  127.0.0.1/32  cert
hostssl   all  all         127.0.0.1/32  trust
hostnossl all  all         127.0.0.1/32  reject
HBA
psql -X -q -d tls -c "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
timeout 600 python3 -u tests/tls.py "$REPO/target/debug/pg_todos" tls "$PORT" "$certs"
