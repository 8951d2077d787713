#!/usr/bin/env bash
# Install everything (scripts/setup.sh --with-test-tools --with-local-model), then run
# the whole test suite: linters and type checks, the Rust crate's checks and tests, and
# pytest against real PostgreSQL, Redis, Celery workers, headless Chromium and a real
# small model served on this machine (tests/live, -m live_model; SF_LIVE_MODEL=0 leaves
# the model out and those tests skip). Extra arguments go to pytest.
#
#   scripts/test.sh            everything (what .ci/run does)
#   scripts/test.sh --quick    the inner loop: no browser, no live model, no Rust
#                              (neither clippy, cargo test nor a rebuild of the native
#                              module), no mypy; ruff and the rest of pytest
#
# pytest runs on every core (pytest-xdist, SF_TEST_WORKERS to change: 0 is one process);
# each worker has its own database, queue, channel prefix and data folder
# (tests/environment.py). The time of each phase and pytest's count come at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
QUICK=0
if [ "${1:-}" = "--quick" ]; then QUICK=1; shift; fi

PHASES=()
phase_started=0
current=""
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
step() {
  phase_end
  current=$1
  phase_started=$(now_ms)
  echo; echo "== $current" >&2
}
phase_end() {
  [ -n "$current" ] || return 0
  local ms=$(( $(now_ms) - phase_started ))
  PHASES+=("$(printf '%-22s %5d.%d s' "$current" $((ms / 1000)) $((ms % 1000 / 100)))")
  current=""
}
PYTEST_LOG=$(mktemp)
summary() {
  local status=$?
  phase_end
  echo; echo "== time of each phase (exit $status)"
  printf '  %s\n' "${PHASES[@]}"
  local counts passed failed
  counts=$(grep -E '^=+ .*(passed|failed|errors?|skipped|no tests ran).* =+$' "$PYTEST_LOG" || true)
  [ -n "$counts" ] || { rm -f "$PYTEST_LOG"; exit "$status"; }
  echo "$counts" | while read -r count; do echo "  pytest: $(echo "$count" | tr -d '=' | sed 's/^ *//; s/ *$//')"; done
  # Both runs added up, as the one closing line a reader of the log looks for.
  # grep finds nothing when nothing failed: its status must not end the script here.
  passed=$(echo "$counts" | { grep -Eo '[0-9]+ passed' || true; } | awk '{n += $1} END {print n + 0}')
  failed=$(echo "$counts" | { grep -Eo '[0-9]+ (failed|errors?)' || true; } | awk '{n += $1} END {print n + 0}')
  echo "total: $passed passed, $failed failed"
  rm -f "$PYTEST_LOG"
  exit "$status"
}
trap summary EXIT

step "set-up"
if [ "$QUICK" = 1 ]; then
  export SF_LIVE_MODEL=0 SF_SKIP_NATIVE_BUILD=1
  scripts/setup.sh --with-test-tools
elif [ "${SF_LIVE_MODEL:-1}" = 1 ]; then
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
CACHE=${SF_CACHE_DIR:-$HOME/.cache/sf}
# Cargo's build outputs outside the checkout: a fresh clone compiles nothing unchanged
# (sf_core/cargo_freshness.py below makes Cargo judge the native crate by content).
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/cargo-target}
# pyo3's build script reruns whenever PATH changes unless PYO3_PYTHON names the
# interpreter; PATH starts with this checkout's .venv, so each clone rebuilt pyo3 and the
# crate. The cached virtualenv's real path is the same for every clone that uses it.
export PYO3_PYTHON=${PYO3_PYTHON:-$(cd .venv && pwd -P)/bin/python}

step "ruff check";          ruff check .
step "ruff format --check"; ruff format --check .
if [ "$QUICK" = 0 ]; then
  step "mypy"
  # mypy's incremental cache outside the checkout, one per lock, mypy and interpreter
  # (it checks each module's content and dependencies itself; a fresh clone reuses it):
  # ~60 s cold, a few seconds warm. Runs take turns on it; unused for two weeks, it goes.
  mypy_key=$({ cat requirements.lock; mypy --version; python -VV; } | sha256sum | cut -c1-16)
  export MYPY_CACHE_DIR=${MYPY_CACHE_DIR:-$CACHE/mypy/$mypy_key}
  mkdir -p "$MYPY_CACHE_DIR" && touch "$MYPY_CACHE_DIR"
  find "$CACHE/mypy" -mindepth 1 -maxdepth 1 -mtime +14 -exec rm -rf {} +
  flock "$MYPY_CACHE_DIR.lock" mypy
  step "cargo fmt --check"; (cd native && cargo fmt --check)
  # One dev-profile build serves clippy and the tests; only the module Python loads is
  # built in release (scripts/setup.sh, cached by its sources' hash). From restore to
  # record, this run alone uses the target directory's record of the crate's sources.
  step "cargo clippy"
  mkdir -p "$CARGO_TARGET_DIR"
  exec 9>"$CARGO_TARGET_DIR/sf-native.lock"; flock 9
  python -m sf_core.cargo_freshness restore native "$CARGO_TARGET_DIR"
  (cd native && cargo clippy --all-targets -q -- -D warnings)
  step "cargo test";        (cd native && cargo test -q)
  python -m sf_core.cargo_freshness record native "$CARGO_TARGET_DIR"
  exec 9>&-
fi

workers=${SF_TEST_WORKERS:-$(nproc)}
xdist=()
[ "$workers" -gt 0 ] && xdist=(-n "$workers" --dist loadgroup)
# The live model tests run after the rest, in one process: one model server on the two
# cores. (pytest-xdist 3.8's xdist_group does not hold them on one worker under pytest
# 9: its node-id suffix is dropped, and each worker started a model server of its own.)
step "pytest"
set +e
if [ "$QUICK" = 1 ]; then
  python -m pytest "${xdist[@]}" -m "not browser and not live_model and not unsettled" "$@" 2>&1 | tee "$PYTEST_LOG"
  status=${PIPESTATUS[0]}
else
  python -m pytest "${xdist[@]}" -m "not live_model and not unsettled" "$@" 2>&1 | tee "$PYTEST_LOG"
  status=${PIPESTATUS[0]}
  step "pytest (live model)"
  python -m pytest -m live_model "$@" 2>&1 | tee -a "$PYTEST_LOG"
  live=${PIPESTATUS[0]}
  # 5: no live test in a selection narrowed by the arguments (-k …), not a failure.
  [ "$live" = 0 ] || [ "$live" = 5 ] || [ "$status" != 0 ] || status=$live
fi
set -e
exit "$status"
