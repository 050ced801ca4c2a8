#!/bin/sh
# Entrypoint of the container image: makes sure the two folders of the /data volume exist (a bind mount or an
# emptied volume starts without them), then runs the `holdfast` CLI with the arguments (default: serve).
set -eu
# Only the default layout is created; a HOLDFAST_LOCAL_ROOTS elsewhere is the operator's to provide.
mkdir -p "${HOLDFAST_DATA_DIR:-/data/state}"
case "${HOLDFAST_LOCAL_ROOTS:-}" in
  /data/backups) mkdir -p /data/backups ;;
esac
# The heap limits `npm start` uses: a small young generation keeps a long-running server's memory flat.
exec node --max-semi-space-size=2 --max-old-space-size=1536 /opt/holdfast/apps/cli/dist/main.js "$@"
