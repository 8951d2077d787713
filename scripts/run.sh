#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then run SF: the web app on 127.0.0.1:8000 and
# one Celery worker, until Ctrl-C.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
set -a; . .sf/env; set +a
export PATH="$ROOT/.venv/bin:$PATH"
HOST=${SF_HOST:-127.0.0.1} PORT=${SF_PORT:-8000}

python manage.py migrate --noinput -v0
python manage.py sf ensure-admin

pids=()
cleanup() { trap - INT TERM EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup INT TERM EXIT

celery -A sf_web worker --loglevel=INFO --concurrency=2 -Q "${SF_CELERY_QUEUE:-sf}" -n "sf-worker@%h" &
pids+=($!)
echo "[run] SF is starting on http://$HOST:$PORT/ (log in as admin; password in .sf/admin-password)" >&2
daphne -b "$HOST" -p "$PORT" sf_web.asgi:application &
pids+=($!)
wait -n "${pids[@]}"
