#!/usr/bin/env bash
# SF's web server (HTTP and websockets): uvicorn, one process per core on one listening
# socket, under uvicorn's own supervisor (it restarts a process that dies and answers
# SIGHUP with a rolling restart). Every process is on the Redis channel layer, so a
# change broadcast by any process or worker reaches the browsers of all of them.
#
#   SF_HOST, SF_PORT          where to listen (127.0.0.1:8000)
#   SF_WEB_PROCESSES          how many processes (the number of cores: nproc)
#   SF_FORWARDED_ALLOW_IPS    the reverse proxy whose X-Forwarded-* headers to believe
#                             (uvicorn's default: 127.0.0.1)
#
# Used by scripts/run.sh, compose.yaml and the Dockerfile, so the three run the same.
set -euo pipefail
HOST=${SF_HOST:-127.0.0.1} PORT=${SF_PORT:-8000}
PROCESSES=${SF_WEB_PROCESSES:-$(nproc)}
# Each request borrows a database connection from its process's pool (sf_web/settings.py).
export SF_DB_POOL=${SF_DB_POOL:-1}
args=(--host "$HOST" --port "$PORT" --workers "$PROCESSES")
# uvicorn[standard]'s parts: websockets for the sockets, httptools and uvloop (C) for
# HTTP and the event loop. Channels has no lifespan events. No per-message deflate: a
# live update is rendered once and sent to every browser of a board; compressing it
# per connection would redo work for each of them.
args+=(--ws websockets-sansio --http httptools --loop uvloop --lifespan off --ws-per-message-deflate false)
args+=(--timeout-graceful-shutdown 20)
if [ -n "${SF_FORWARDED_ALLOW_IPS:-}" ]; then args+=(--forwarded-allow-ips "$SF_FORWARDED_ALLOW_IPS"); fi
exec python -m uvicorn sf_web.asgi:application "${args[@]}"
