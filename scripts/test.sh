#!/usr/bin/env bash
# Install everything (scripts/setup.sh --with-test-tools), then run the whole test
# suite: linters and type checks, the Rust crate's checks and tests, and pytest against
# real PostgreSQL, Redis, Celery workers and headless Chromium. Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh --with-test-tools
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
