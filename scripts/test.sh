#!/usr/bin/env bash
# Install everything (scripts/setup.sh --with-test-tools --with-local-model), then run
# the whole test suite: linters and type checks, the Rust crate's checks and tests, and
# pytest against real PostgreSQL, Redis, Celery workers, headless Chromium and a real
# small model served on this machine (tests/live, -m live_model; SF_LIVE_MODEL=0 leaves
# the model out and those tests skip). Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ "${SF_LIVE_MODEL:-1}" = 1 ]; then
  scripts/setup.sh --with-test-tools --with-local-model
else
  scripts/setup.sh --with-test-tools
fi
set -a; . .sf/env; set +a
# The checkout's database gets a test_ twin from pytest-django; the queue and the
# channel prefix need their own names, or a running scripts/run.sh would take test units.
export SF_CELERY_QUEUE="${SF_CELERY_QUEUE:-sf}-test" SF_CHANNELS_PREFIX="${SF_CHANNELS_PREFIX:-sf}-test"
export PATH="$ROOT/.venv/bin:$PATH"
if ! command -v cargo >/dev/null && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi

step() { echo; echo "== $*" >&2; }
step "ruff check";         ruff check .
step "ruff format --check"; ruff format --check .
step "mypy";               mypy
step "cargo fmt --check";  (cd native && cargo fmt --check)
step "cargo clippy";       (cd native && cargo clippy --release --all-targets -q -- -D warnings)
step "cargo test";         (cd native && cargo test --release -q)
step "pytest";             python -m pytest "$@"
