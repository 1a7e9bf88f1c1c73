#!/usr/bin/env bash
# A real PostgreSQL speaking the integration harness's contract, to check the client tests
# against the reference implementation:
#
#   MZSPARK_SERVER_CMD="tests/integration/reference_postgres.sh {data_dir}" \
#     .venv/bin/python -m pytest -p no:cacheprovider tests/integration
#
# Starts (initdb'ing on first use) a cluster for DATA_DIR with trust auth, user and database
# `materialize`, on a free port; prints `mzspark ready on 127.0.0.1:PORT`; stays in the
# foreground so the harness can SIGTERM / SIGKILL it like the real server. Expected
# differences from mzspark: PostgreSQL accepts `SELECT ... FOR UPDATE`.
set -euo pipefail
key=$(printf %s "$1" | md5sum | cut -c1-16)
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
root=/tmp/mzspark-pgref
d=$root/$key
as_pg=()
if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); fi
mkdir -p "$root" && chmod 1777 "$root"
if [ ! -f "$d/data/PG_VERSION" ]; then
  mkdir -p "$d"
  [ "$(id -u)" = 0 ] && chown postgres "$d"
  "${as_pg[@]}" "$bin/initdb" -A trust -U materialize -D "$d/data" >/dev/null
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$d'"
  } >>"$d/data/postgresql.conf"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_pg[@]}" "$bin/postgres" -D "$d/data" -p "$port" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid || true; exit 0' TERM INT
for _ in $(seq 300); do
  "$bin/pg_isready" -q -U materialize -d postgres -h 127.0.0.1 -p "$port" && break
  sleep 0.1
done
psql -X -h 127.0.0.1 -p "$port" -U materialize -d postgres -qAt \
  -c "SELECT 1 FROM pg_database WHERE datname = 'materialize'" | grep -q 1 ||
  psql -X -h 127.0.0.1 -p "$port" -U materialize -d postgres -q -c "CREATE DATABASE materialize"
echo "mzspark ready on 127.0.0.1:$port"
wait $pid
