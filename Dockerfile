# The storeops service: production dependencies only, run by an unprivileged user, its data (the
# embedded PostgreSQL when DATABASE_URL is unset) in the /data volume. How to use it: docs/deploy.md.
FROM node:24-bookworm-slim

# Festival's and Flite's CMU "slt" voice, which staff understand best on the radio (docs/radio.md);
# without them the service speaks with its npm engines.
RUN apt-get update \
  && apt-get install -y --no-install-recommends festival festvox-us-slt-hts flite \
  && rm -rf /var/lib/apt/lists/*

# A system user that owns only the data volume and its home (where npm, for `docker exec ... npm
# run ...`, writes its logs: not in DATA_DIR, which a restore wants empty). The code stays root's.
RUN useradd --system --user-group --create-home --home-dir /home/storeops --shell /usr/sbin/nologin storeops \
  && mkdir /data && chown storeops:storeops /data

WORKDIR /app
COPY package.json package-lock.json ./
# The "node" dependency installs the pinned Node.js 24 that npm start runs, and that CMD runs too.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY examples ./examples

# NODE_ENV=production: a documentation example secret in the environment or PROVISION_FILE stops the start.
ENV DATA_DIR=/data MALLOC_ARENA_MAX=2 NODE_ENV=production
VOLUME /data
USER storeops
# HTTP, and the embedded MQTT broker's MQTT_PORT (only used when MQTT_URL is unset).
EXPOSE 3000 1883

# Ready when the database answers (503 otherwise). A supervisor should take an unready instance
# out of rotation, not restart it: it recovers by itself when the database is back.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/app/node_modules/node/bin/node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# What `npm start` runs (package.json), without npm in between, so SIGTERM reaches the service.
CMD ["/app/node_modules/node/bin/node", "--max-semi-space-size=8", "--liftoff-only", "src/main.ts"]
