# syntax=docker/dockerfile:1
# The Holdfast container image (docs/operations/container.md).
#   docker build -t holdfast .
#   docker run -d -p 3000:3000 -v holdfast-data:/data --stop-timeout 330 holdfast
#
# BASE must be Debian trixie with Node.js 24 and npm under /usr/local (the layout of the official node images).
# The tests build it from Debian's packages instead (tooling/container/base-image.mjs), since no registry is
# reachable there.
ARG BASE=node:24-trixie-slim

# ---- build: every dependency (dev included), transpile, web app, then stage only what runs ----
FROM ${BASE} AS build
WORKDIR /src
COPY . .
# npm ci with dev dependencies: esbuild and vite build the packages and the web app. Types are checked by
# `npm test` and CI, not here: the image build transpiles (tooling/scripts/build-fast.mjs).
# A network that re-signs TLS (a proxy with its own CA) can hand the CA in as a build secret:
#   docker build --secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt .
RUN --mount=type=secret,id=ca_bundle,target=/run/secrets/ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_bundle; fi \
 && npm ci --no-audit --no-fund --ignore-scripts \
 && node tooling/scripts/build-fast.mjs --quiet \
 && node tooling/container/stage-runtime.mjs /out \
 && install -m 0755 tooling/container/entrypoint.sh /out/entrypoint.sh

# ---- system: Node, the dump and transfer tools, the service user; no npm, no compiler ----
FROM ${BASE} AS system
ARG DEBIAN_FRONTEND=noninteractive
# postgresql-client is Debian's newest major (17 on trixie): its pg_dump reads servers 9.2-17 and pg_restore
# writes to 9.2-17. mariadb-client has mariadb-dump and mariadb-binlog; mariadb-backup the physical backups.
# tini is PID 1: it forwards SIGTERM to Node and reaps the dump tools' orphans. The PostgreSQL tools are linked
# into /usr/local/bin so they run without Debian's Perl wrapper; slim.sh then removes what no adapter runs, strips
# Node's debugging symbols (binutils is installed for that and removed again) and removes npm.
COPY tooling/container/slim.sh /tmp/slim.sh
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates passwd tini zstd \
      postgresql-client mariadb-client mariadb-backup redis-tools sqlite3 \
      openssh-client rsync rclone smbclient binutils \
 && for tool in /usr/lib/postgresql/*/bin/*; do ln -sf "$tool" /usr/local/bin/; done \
 && sh /tmp/slim.sh \
 && apt-get purge -y --auto-remove binutils \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/log/* \
      /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/lintian /tmp/slim.sh \
 && groupadd --gid 10001 holdfast \
 && useradd --uid 10001 --gid holdfast --home-dir /data --no-create-home --shell /usr/sbin/nologin holdfast \
 && mkdir -p /data/state /data/backups && chown -R holdfast:holdfast /data && chmod -R 0700 /data

# ---- runtime: the system above as one layer (what its RUN removed from the base, npm above all, is gone, not
# hidden under a later layer), then the staged packages as a second layer, the one that changes with each release ----
FROM scratch AS runtime
COPY --from=system / /
COPY --from=build /out /opt/holdfast

# All state lives in /data: the embedded database and the generated system key in /data/state, local
# destinations in /data/backups. Secrets can come from files: HOLDFAST_ENCRYPTION_KEY_FILE,
# HOLDFAST_ADMIN_PASSWORD_FILE, DATABASE_URL_FILE.
# PATH as the base images set it (a `FROM scratch` stage inherits no environment).
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    PORT=3000 \
    HOLDFAST_DATA_DIR=/data/state \
    HOLDFAST_LOCAL_ROOTS=/data/backups \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
VOLUME ["/data"]
WORKDIR /data
USER holdfast:holdfast
EXPOSE 3000
# A run in progress gets HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS (5 minutes) after SIGTERM: give `docker stop` a longer
# timeout (--stop-timeout 330, compose stop_grace_period: 330s), or the runtime kills it after 10 s.
STOPSIGNAL SIGTERM
# An agent container (`agent --server ...`) serves no HTTP: it is healthy while its process runs (tini's arguments
# name the mode).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "if(require('fs').readFileSync('/proc/1/cmdline','utf8').split('\\0').includes('agent'))process.exit(0);fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/holdfast/entrypoint.sh"]
CMD ["serve"]
