#!/bin/sh
# Entrypoint of the container image: makes sure the two folders of the /data volume exist (a bind mount or an
# emptied volume starts without them), then runs the `holdfast` CLI with the arguments (default: serve).
set -eu
# Only the default layout is created; a HOLDFAST_LOCAL_ROOTS elsewhere is the operator's to provide.
mkdir -p "${HOLDFAST_DATA_DIR:-/data/state}"
case "${HOLDFAST_LOCAL_ROOTS:-}" in
  /data/backups) mkdir -p /data/backups ;;
esac
# `agent ...` runs a remote agent (docs/agents.md "In a container"): its key and enrollment go to
# HOLDFAST_AGENT_STATE_DIR (default /data/agent, in the volume, so a new container keeps the pairing) unless the
# arguments name a --state-dir.
if [ "${1:-}" = agent ]; then
  shift
  case " $* " in
    *" --state-dir "* | *" --state-dir="*) set -- agent "$@" ;;
    *) set -- agent --state-dir "${HOLDFAST_AGENT_STATE_DIR:-/data/agent}" "$@" ;;
  esac
fi
# The heap limits `npm start` uses: a small young generation keeps a long-running server's memory flat.
exec node --max-semi-space-size=2 --max-old-space-size=1536 /opt/holdfast/apps/cli/dist/main.js "$@"
