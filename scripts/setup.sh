#!/usr/bin/env bash
# Idempotent set-up of everything SF needs on a fresh Debian machine with Python 3.11
# and a Rust toolchain: system packages, PostgreSQL and Redis (started if they do not
# answer), the virtualenv from requirements.lock, and the native module.
#
#   scripts/setup.sh                  what running SF needs
#   scripts/setup.sh --with-test-tools  plus Chromium, ripgrep and patch for the tests
#   scripts/setup.sh --with-local-model plus a real small model served on this machine
#                                       (llama.cpp's server, prebuilt; the weights
#                                       checked by sha256 into ~/.cache/sf/models)
#
# It writes .sf/env with the DATABASE_URL, REDIS_URL, SF_CELERY_QUEUE and
# SF_CHANNELS_PREFIX it settled on; run.sh and test.sh source it, manage.py, daphne and
# the Celery worker read it. Each checkout gets its own database (sf_<8 hex digits of
# the checkout's path>), queue and prefix, so two checkouts on one host never share
# them by accident. Variables already set in the environment win, then an earlier
# .sf/env (a checkout keeps the names it started with).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. scripts/checkout.sh
env_file_keep .sf/env DATABASE_URL REDIS_URL SF_CELERY_QUEUE SF_CHANNELS_PREFIX
read -r CHECKOUT_DATABASE CHECKOUT_QUEUE CHECKOUT_PREFIX < <(checkout_names "$ROOT")
WITH_TEST_TOOLS=0 WITH_LOCAL_MODEL=0
for arg in "$@"; do
  case "$arg" in
    --with-test-tools) WITH_TEST_TOOLS=1 ;;
    --with-local-model) WITH_LOCAL_MODEL=1 ;;
    *) echo "setup.sh: unknown option $arg (accepted: --with-test-tools, --with-local-model)" >&2; exit 2 ;;
  esac
done

log() { echo "[setup] $*" >&2; }
answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

PG_HOST=127.0.0.1 PG_PORT=5432 REDIS_HOST=127.0.0.1 REDIS_PORT=6379

# --- system packages ------------------------------------------------------------------
packages=()
command -v git >/dev/null || packages+=(git)
command -v curl >/dev/null || packages+=(curl)
if ! answers $PG_HOST $PG_PORT; then
  command -v pg_ctlcluster >/dev/null || packages+=(postgresql)
fi
command -v psql >/dev/null || packages+=(postgresql-client)
# The OS sandbox of agent and verify commands (agents_app/runtime/sandbox.py).
[ -x /usr/bin/bwrap ] || packages+=(bubblewrap)
# The bridge from a sandbox to SF's egress proxy (agents_app/runtime/egress.py).
[ -x /usr/bin/socat ] || packages+=(socat)
# Its seccomp filter is compiled with libseccomp (pyseccomp loads libseccomp.so.2);
# prlimit (util-linux) sets the resource limits of each command.
ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2 ' || packages+=(libseccomp2)
command -v prlimit >/dev/null || packages+=(util-linux)
if ! answers $REDIS_HOST $REDIS_PORT; then
  command -v redis-server >/dev/null || packages+=(redis-server)
fi
if [ "$WITH_TEST_TOOLS" = 1 ]; then
  command -v rg >/dev/null || packages+=(ripgrep)
  command -v patch >/dev/null || packages+=(patch)
  [ -x /usr/bin/chromium ] || packages+=(chromium)
fi
if [ ${#packages[@]} -gt 0 ]; then
  log "installing system packages: ${packages[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${packages[@]}" >/dev/null
fi

# When SF runs as root, bwrap runs as this unprivileged system user, so that a command
# is not root to the kernel's file permission checks (agents_app/runtime/sandbox_user.py).
SANDBOX_USER=${SF_SANDBOX_USER:-sf-sandbox}
if [ "$(id -u)" = 0 ] && ! id -u "$SANDBOX_USER" >/dev/null 2>&1; then
  if command -v useradd >/dev/null; then
    log "creating the sandbox's user $SANDBOX_USER"
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$SANDBOX_USER"
  else
    log "no useradd: commands will run as root in the sandbox (manage.py check: sf.W015)"
  fi
fi

# --- PostgreSQL -----------------------------------------------------------------------
if ! answers $PG_HOST $PG_PORT; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  log "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do answers $PG_HOST $PG_PORT && break; sleep 1; done
fi
if [ -z "${DATABASE_URL:-}" ]; then
  if psql "postgres://postgres@$PG_HOST:$PG_PORT/postgres" -Atqc 'select 1' >/dev/null 2>&1; then
    DATABASE_URL="postgres://postgres@$PG_HOST:$PG_PORT/$CHECKOUT_DATABASE"
  else
    # A stock Debian cluster wants a password over TCP: give SF a role of its own.
    log "creating PostgreSQL role sf"
    as_root runuser -u postgres -- psql -qc \
      "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='sf') THEN CREATE ROLE sf LOGIN CREATEDB PASSWORD 'sf'; END IF; END\$\$;"
    DATABASE_URL="postgres://sf:sf@$PG_HOST:$PG_PORT/$CHECKOUT_DATABASE"
  fi
fi

# --- Redis ----------------------------------------------------------------------------
if ! answers $REDIS_HOST $REDIS_PORT; then
  log "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port $REDIS_PORT --save "" --appendonly no >/dev/null
  for _ in $(seq 1 30); do answers $REDIS_HOST $REDIS_PORT && break; sleep 0.2; done
fi
REDIS_URL=${REDIS_URL:-redis://$REDIS_HOST:$REDIS_PORT/0}
SF_CELERY_QUEUE=${SF_CELERY_QUEUE:-$CHECKOUT_QUEUE}
SF_CHANNELS_PREFIX=${SF_CHANNELS_PREFIX:-$CHECKOUT_PREFIX}

# --- Python ---------------------------------------------------------------------------
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "setup.sh: SF needs Python 3.11; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
  exit 1
fi
# The virtualenv lives outside the checkout, keyed by the lock and the interpreter
# (~/.cache/sf/venv-<key>); .venv is a symlink to it, so a fresh clone on a machine that
# ran set-up before finds it ready. A checkout whose .venv is a real directory keeps it.
# A venv is complete only once its .sf-lock is written (a killed install is redone).
CACHE=${SF_CACHE_DIR:-$HOME/.cache/sf}
mkdir -p "$CACHE/wheels"
lock_hash=$({ sha256sum requirements.lock; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
# A .venv that is a real directory, or a symlink to a venv of the developer's choosing,
# is used as it is.
case "$(readlink .venv 2>/dev/null || echo "-")" in
  "$CACHE"/venv-*|-) cached=1 ;;
  *) cached=0 ;;
esac
[ -d .venv ] && ! [ -L .venv ] && cached=0
if [ "$cached" = 1 ]; then
  venv_dir="$CACHE/venv-$lock_hash"
  [ "$(readlink .venv 2>/dev/null)" = "$venv_dir" ] || ln -sfn "$venv_dir" .venv
else
  venv_dir=$(cd .venv && pwd -P)
fi
exec 8>"$CACHE/venv.lock"; flock 8   # one set-up at a time changes the shared venvs
if [ "$(cat "$venv_dir/.sf-lock" 2>/dev/null)" != "$lock_hash" ]; then
  log "creating the virtualenv $venv_dir from requirements.lock"
  if [ "$cached" = 1 ]; then rm -rf "$venv_dir"; fi
  [ -x "$venv_dir/bin/python" ] || "$PYTHON" -m venv "$venv_dir"
  "$venv_dir/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$venv_dir/bin/python" -m pip install -q -r requirements.lock
  rm -f "$venv_dir/.sf-native"
  echo "$lock_hash" > "$venv_dir/.sf-lock"
fi
# Forget cached venvs and wheels no set-up has used for two weeks (old locks, old sources).
touch "$venv_dir/.sf-used"
find "$CACHE" -maxdepth 2 -path "$CACHE/venv-*/.sf-used" -mtime +14 -printf '%h\0' \
  | xargs -0 -r rm -rf

# --- the native module ----------------------------------------------------------------
# Built once per content of its sources into a wheel under ~/.cache/sf/wheels (keyed
# by their hash) and installed from there; Cargo's target directory lives outside the
# checkout too (CARGO_TARGET_DIR), so an unchanged crate is never compiled again.
if ! command -v cargo >/dev/null && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
command -v cargo >/dev/null || { echo "setup.sh: the Rust toolchain (cargo) is missing" >&2; exit 1; }
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/cargo-target}
# gitleaks' rules are data in a crate that is fetched, never compiled (native/build.rs
# reads it): fetch it for the build here and for cargo test/clippy in scripts/test.sh.
(cd native && cargo fetch --locked -q)
# The key is the sources' content and the interpreter, never their times
# (sf_core/native_source.py; the doctor compares the same manifest).
native_hash=$("$PYTHON" sf_core/native_source.py native)
wheel_dir="$CACHE/wheels/sf_native-$native_hash"
if [ "${SF_SKIP_NATIVE_BUILD:-0}" = 1 ] && "$venv_dir/bin/python" -c 'import sf_native' 2>/dev/null; then
  # scripts/test.sh --quick: the native module installed is used as it is.
  [ "$(cat "$venv_dir/.sf-native" 2>/dev/null)" = "$native_hash" ] \
    || log "SF_SKIP_NATIVE_BUILD: the installed native module is not built from these sources"
elif [ "$(cat "$venv_dir/.sf-native" 2>/dev/null)" != "$native_hash" ] || ! "$venv_dir/bin/python" -c 'import sf_native' 2>/dev/null; then
  if ! ls "$wheel_dir"/*.whl >/dev/null 2>&1; then
    log "building the native module (maturin, release) into $wheel_dir"
    rm -rf "$wheel_dir.tmp"
    # Sources made new: with the shared target directory, a release build from another
    # checkout's sources must not pass for this one's (Cargo compares times).
    "$PYTHON" -m sf_core.cargo_freshness touch native
    PATH="$venv_dir/bin:$PATH" maturin build --release -q -m native/Cargo.toml \
      -i "$venv_dir/bin/python" -o "$wheel_dir.tmp" >/dev/null
    mv "$wheel_dir.tmp" "$wheel_dir"
  fi
  log "installing the native module from $wheel_dir"
  "$venv_dir/bin/python" -m pip install -q --no-deps --force-reinstall "$wheel_dir"/*.whl
  echo "$native_hash" > "$venv_dir/.sf-native"
fi
# What the installed module is built from, for `sf doctor` (native.version).
[ "$(cat "$venv_dir/.sf-native" 2>/dev/null)" != "$native_hash" ] \
  || "$PYTHON" sf_core/native_source.py native "$venv_dir/.sf-native.json" >/dev/null
[ ! -d "$wheel_dir" ] || touch "$wheel_dir"
find "$CACHE/wheels" -mindepth 1 -maxdepth 1 -mtime +14 -exec rm -rf {} +

# --- a real model on this machine (optional) -------------------------------------------
if [ "$WITH_LOCAL_MODEL" = 1 ]; then
  model_lock_hash=$(sha256sum requirements-local-model.lock | cut -d' ' -f1)
  if [ "$(cat "$venv_dir/.sf-local-model" 2>/dev/null)" != "$model_lock_hash" ]; then
    log "installing the local model server (xllamacpp, prebuilt)"
    .venv/bin/python -m pip install -q --require-hashes -r requirements-local-model.lock
    echo "$model_lock_hash" > "$venv_dir/.sf-local-model"
  fi
  log "local model: $(.venv/bin/python scripts/local_model.py install --model "${SF_LOCAL_MODEL:-qwen2.5-coder-1.5b}")"
fi

exec 8>&-

# --- the database ---------------------------------------------------------------------
DATABASE_URL="$DATABASE_URL" .venv/bin/python scripts/ensure_database.py

mkdir -p .sf
cat > .sf/env <<EOF
# Written by scripts/setup.sh; the environment wins over these lines.
DATABASE_URL=${DATABASE_URL}
REDIS_URL=${REDIS_URL}
SF_CELERY_QUEUE=${SF_CELERY_QUEUE}
SF_CHANNELS_PREFIX=${SF_CHANNELS_PREFIX}
EOF
log "ready: .sf/env names database ${DATABASE_URL##*/}, queue $SF_CELERY_QUEUE, prefix $SF_CHANNELS_PREFIX"
