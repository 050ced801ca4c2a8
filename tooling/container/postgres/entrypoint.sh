#!/bin/sh
# First start: initdb with POSTGRES_USER/POSTGRES_PASSWORD (password auth over TCP), create POSTGRES_DB. Then run
# the server in the foreground, listening on every address of the container's network.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > /tmp/pwfile
  initdb -D "$PGDATA" -U "${POSTGRES_USER:=postgres}" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo 'host all all 0.0.0.0/0 scram-sha-256' >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/tmp" -w start >/dev/null
  if [ "${POSTGRES_DB:=$POSTGRES_USER}" != postgres ]; then createdb -h /tmp -U "$POSTGRES_USER" "$POSTGRES_DB"; fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
