#!/usr/bin/env bash
# Makes sure the local PostgreSQL used by the tests answers on 127.0.0.1:5432 (database `test`,
# trust auth); starts the cluster when it is down and creates the database when it is missing.
# Prints the URL to use. Exit status non-zero with a message when it cannot.
set -euo pipefail

HOST=${PGHOST_TEST:-127.0.0.1}
PORT=${PGPORT_TEST:-5432}
DB=${PGDATABASE_TEST:-test}

ready() { pg_isready -q -h "$HOST" -p "$PORT" >/dev/null 2>&1; }
can_query() { psql -h "$HOST" -p "$PORT" -U "$1" -d "$2" -Atqc 'select 1' >/dev/null 2>&1; }

if ! ready; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ ! -d /etc/postgresql ]; then
    echo "ensure-postgres: PostgreSQL is not running on $HOST:$PORT and no local cluster is installed (pg_ctlcluster, /etc/postgresql)" >&2
    exit 1
  fi
  VERSION=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "ensure-postgres: starting PostgreSQL $VERSION/main" >&2
  pg_ctlcluster --skip-systemctl-redirect "$VERSION" main start || true
  for _ in $(seq 1 30); do ready && break; sleep 1; done
  if ! ready; then
    echo "ensure-postgres: PostgreSQL $VERSION/main did not become ready on $HOST:$PORT" >&2
    exit 1
  fi
fi

for USER_ in postgres "$(id -un)"; do
  if can_query "$USER_" "$DB"; then
    echo "postgres://$USER_@$HOST:$PORT/$DB"
    exit 0
  fi
  if can_query "$USER_" postgres; then
    psql -h "$HOST" -p "$PORT" -U "$USER_" -d postgres -qc "CREATE DATABASE \"$DB\"" >/dev/null 2>&1 || true
    if can_query "$USER_" "$DB"; then
      echo "postgres://$USER_@$HOST:$PORT/$DB"
      exit 0
    fi
  fi
done
echo "ensure-postgres: PostgreSQL runs on $HOST:$PORT but neither user postgres nor $(id -un) can connect to database $DB (trust auth expected)" >&2
exit 1
