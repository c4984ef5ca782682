#!/usr/bin/env bash
# board: the live board (cli/assets/board.html, served by `pg_todos serve` at /) in a real
# browser. Builds the service, starts a throwaway cluster with the extension, the plain role
# agent_login and two tenants (acme for the checks, northwind for a realistic board), makes a
# token for each as the superuser, and runs tests/board.py: headless Chromium through
# Selenium and Debian's chromedriver drives the page while psycopg writes as agents.
# tests/board.py starts `pg_todos serve` itself (as agent_login), since one check stops and
# restarts it to see the page reconnect; it stops it at the end.
#
#   tests/board.sh                 run the checks; the realistic board's screenshot goes to
#                                  a temporary file
#   tests/board.sh --screenshot    the same, and save that screenshot as docs/board.png
#
# Needs chromium, chromium-driver (Debian) and selenium, psycopg (pip).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_BOARD_PORT:-54340}
shot=""
case "${1:-}" in
  --screenshot) shot="$REPO/docs/board.png" ;;
  "") ;;
  *) echo "usage: tests/board.sh [--screenshot]" >&2; exit 2 ;;
esac
for need in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$need" ] || { echo "board: $need is missing (apt-get install chromium chromium-driver)" >&2; exit 1; }
done
python3 -c 'import selenium, psycopg' 2>/dev/null \
  || { echo "board: python modules selenium and psycopg are needed (pip install selenium 'psycopg[binary]')" >&2; exit 1; }

cargo build -p pg_todos_cli >/tmp/pg_todos-board-build.log 2>&1 || { cat /tmp/pg_todos-board-build.log >&2; exit 1; }
server="$REPO/target/debug/pg_todos"

. bin/lib/throwaway.sh
throwaway board "$PORT"
createdb board
agent_database board acme northwind
token_acme=$(psql -X -qAt -v ON_ERROR_STOP=1 -d board -c "SELECT token FROM todo.create_token('acme', 'Ada', person => true)")
token_northwind=$(psql -X -qAt -v ON_ERROR_STOP=1 -d board -c "SELECT token FROM todo.create_token('northwind', 'Ada', person => true)")
listen=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

status=0
BOARD_SERVER="$server" BOARD_LISTEN="$listen" BOARD_DB=board \
BOARD_TOKEN="$token_acme" BOARD_DEMO_TOKEN="$token_northwind" BOARD_SCREENSHOT="$shot" \
  timeout 600 python3 -u tests/board.py || status=1
exit $status
