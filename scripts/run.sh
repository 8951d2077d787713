#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then run SF: the web app on 127.0.0.1:8000
# (SF_HOST, SF_PORT; it stops at once if the port is taken; scripts/web.sh: one process
# per core, SF_WEB_PROCESSES) and Celery workers on this checkout's queues
# (sf_core/queues.py: one for agent units, one for short work a person waits on — plans,
# merges, dispatch — and one for notifications), until Ctrl-C. Then the offline demo: a
# fresh copy of examples/sample-repo, planned and built by a replayed trace recorded
# from a live local model (no model credentials needed), headless via the worker. It
# starts when the first person opens the dashboard (dashboard_app/run_demo.py), which
# then says where it is; each replayed model step takes SF_REPLAY_PACE (6 s here), so it
# can be watched. SF_DEMO=0 skips it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
set -a; . .sf/env; set +a
export PATH="$ROOT/.venv/bin:$PATH"
HOST=${SF_HOST:-127.0.0.1} PORT=${SF_PORT:-8000}
if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
  echo "run.sh: $HOST:$PORT is already in use (another SF checkout?);" \
    "pick another port: SF_PORT=8001 scripts/run.sh" >&2
  exit 1
fi

python manage.py migrate --noinput -v0
python manage.py sf ensure-admin

# The demo waits for a person: the first dashboard opened takes this marker.
DEMO_DIR="${SF_DATA_DIR:-$ROOT/.sf}/demo"
mkdir -p "$DEMO_DIR" && rm -f "$DEMO_DIR/run-demo-started" "$DEMO_DIR/run-demo-waiting"
if [ "${SF_DEMO:-1}" = 1 ]; then date -u +%FT%TZ >"$DEMO_DIR/run-demo-waiting"; fi

pids=()
cleanup() { trap - INT TERM EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup INT TERM EXIT

# Node names are unique per checkout: no duplicate node names. The units worker also
# takes short work when a slot is free; the other two never wait behind a unit, and
# notifications never behind a plan or a merge.
QUEUE=${SF_CELERY_QUEUE:-sf}
# Replayed model steps take as long as a live model's would, so the demo can be watched.
SF_REPLAY_PACE=${SF_REPLAY_PACE:-6s} \
  celery -A sf_web worker --loglevel=INFO --concurrency=2 -Q "$QUEUE,$QUEUE.short,$QUEUE.notify" \
  -n "$QUEUE-worker@${SF_WORKER_HOST:-%h}" &
pids+=($!)
SF_REPLAY_PACE=${SF_REPLAY_PACE:-6s} \
  celery -A sf_web worker --loglevel=INFO --concurrency=1 -Q "$QUEUE.short" -n "$QUEUE-short@${SF_WORKER_HOST:-%h}" &
pids+=($!)
celery -A sf_web worker --loglevel=INFO --concurrency=1 -Q "$QUEUE.notify" -n "$QUEUE-notify@${SF_WORKER_HOST:-%h}" &
pids+=($!)
echo "[run] SF is starting on http://$HOST:$PORT/ (log in as admin; password in .sf/admin-password)" >&2
SF_HOST=$HOST SF_PORT=$PORT scripts/web.sh &  # uvicorn, one process per core
pids+=($!)

demo() {
  local repo="$DEMO_DIR/greeter"
  for _ in $(seq 1 120); do (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null && break; sleep 0.5; done
  for _ in $(seq 1 30); do
    python manage.py sf status 2>/dev/null | grep -Eq "workers +[1-9][0-9]* online" && break; sleep 1
  done
  rm -rf "$repo" && mkdir -p "$(dirname "$repo")" && cp -r examples/sample-repo "$repo"
  git -C "$repo" init -q -b main && git -C "$repo" add --all
  git -C "$repo" -c user.name="SF demo" -c user.email=demo@localhost commit -qm "The greeter"
  echo "[run] demo: ready; it starts when you open http://$HOST:$PORT/ (log in as admin)," \
    "and the dashboard says where it is" >&2
  while [ -e "$DEMO_DIR/run-demo-waiting" ]; do sleep 1; done
  echo "[run] demo: a replayed session on $repo, started" >&2
  python manage.py sf headless --project "$repo" --replay examples/demo-trace.jsonl \
    --autonomous --via-workers --timeout 600 \
    && echo "[run] demo done: git -C $repo log --oneline shows the merged change" >&2 \
    || echo "[run] demo ended with exit code $? (see above)" >&2
  echo "[run] for a live model: set SF_MODEL_SMART and SF_MODEL_DEEP (litellm names such as" \
    "anthropic/claude-sonnet-4-5) and the provider's key, then" \
    "python manage.py sf headless --project PATH --intent '...' --autonomous" >&2
}
if [ "${SF_DEMO:-1}" = 1 ]; then demo & fi
wait -n "${pids[@]}"
