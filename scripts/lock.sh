#!/usr/bin/env bash
# Rewrite requirements.lock from a fresh virtualenv built from pyproject.toml's pins.
#
#   scripts/lock.sh          every package resolved afresh (transitive pins may move)
#   scripts/lock.sh --keep   the pins already in requirements.lock are kept as
#                            constraints: only what pyproject.toml adds or changes moves
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
constraints=()
case "${1:-}" in
  --keep) constraints=(-c "$ROOT/requirements.lock") ;;
  "") ;;
  *) echo "lock.sh: unknown option $1 (accepted: --keep)" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3.11 -m venv "$tmp/venv"
"$tmp/venv/bin/python" - "${constraints[@]}" <<'PY'
import subprocess, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
pins = project["dependencies"] + project["optional-dependencies"]["dev"]
subprocess.run([sys.executable, "-m", "pip", "install", "-q", *sys.argv[1:], *pins], check=True)
PY
{
  echo "# Exact pins of every Python package SF installs (direct and transitive)."
  echo "# Regenerate after changing pyproject.toml: scripts/lock.sh (--keep: move only what changed)"
  "$tmp/venv/bin/pip" freeze
} > requirements.lock.new
mv requirements.lock.new requirements.lock
echo "requirements.lock: $(grep -vc '^#' requirements.lock) packages"
