#!/bin/sh
# Entry point of the line's PostgreSQL: on an empty data volume, makes the cluster with POSTGRES_USER (owner,
# password POSTGRES_PASSWORD) and its database POSTGRES_DB, reachable from the compose network with that password
# only; then runs PostgreSQL in the foreground. A volume that holds a cluster is used as it is.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
user="${POSTGRES_USER:-agent}"
db="${POSTGRES_DB:-calls}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "start.sh: set POSTGRES_PASSWORD (the call-record database's password) in the environment" >&2
    exit 2
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    initdb --pgdata="$PGDATA" --username="$user" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$password_file"
    # Other containers on the compose network connect over TCP with the password.
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait start >/dev/null
    # The container's own socket trusts its one user (--auth-local=trust): the database is made over it.
    psql --host=/var/run/postgresql --username="$user" --dbname=postgres --quiet \
        --command="CREATE DATABASE \"$db\" OWNER \"$user\"" || { pg_ctl --pgdata="$PGDATA" --wait stop; exit 1; }
    pg_ctl --pgdata="$PGDATA" --wait stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
