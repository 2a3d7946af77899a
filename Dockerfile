# syntax=docker/dockerfile:1
# videogen's image: one for every role (`serve`, `serve --role api`, `worker`); see docs/deployment.md.
#
#   docker build -t videogen .
#   docker run --rm -p 8080:8080 -v videogen-data:/var/lib/videogen videogen            # one machine, SQLite
#   docker run --rm --env-file .env videogen serve --role api                          # or `worker`
#
# The build stage packs the server (`npm pack -w videogen`: dist/ built, @videogen/client bundled); the runtime
# stage installs that tarball with deploy/install-server.sh, the script CI runs on every change
# (scripts/check-installed-server.mjs), so the image holds the same install CI tested: runtime dependencies only.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY packages/server/package.json packages/server/
# TypeScript needs no native addon: no install scripts, so no compiler in this stage.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN mkdir /tarball && npm pack -w videogen --pack-destination /tarball && mv /tarball/videogen-*.tgz /tarball/videogen.tgz

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# tini is PID 1: it forwards SIGTERM to the server (which drains) and reaps the processes that exec engines'
# commands leave behind.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
COPY deploy/install-server.sh /usr/local/lib/videogen/install-server.sh
COPY --from=build /tarball/ /tmp/tarball/
# The compiler builds better-sqlite3 where no prebuilt binary fits, and leaves with the same layer.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && sh /usr/local/lib/videogen/install-server.sh /tmp/tarball/videogen.tgz /opt/videogen \
  && apt-get purge -y --auto-remove python3 make g++ \
  && rm -rf /var/lib/apt/lists/* /tmp/tarball /root/.npm /root/.cache \
  && mkdir -p /var/lib/videogen \
  && chown node:node /var/lib/videogen

ENV NODE_ENV=production \
  PATH=/opt/videogen/node_modules/.bin:$PATH \
  VIDEOGEN_HOST=0.0.0.0 \
  VIDEOGEN_PORT=8080 \
  VIDEOGEN_DATA_DIR=/var/lib/videogen
# The SQLite store and local files of a one-machine install; with PostgreSQL and S3 it holds nothing shared.
VOLUME ["/var/lib/videogen"]
WORKDIR /var/lib/videogen
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.VIDEOGEN_PORT + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "videogen"]
CMD ["serve"]
