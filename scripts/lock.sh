#!/usr/bin/env bash
# Rewrite requirements.lock from a fresh virtualenv built from pyproject.toml's pins.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3.11 -m venv "$tmp/venv"
"$tmp/venv/bin/python" - <<'PY'
import subprocess, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
pins = project["dependencies"] + project["optional-dependencies"]["dev"]
subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pins], check=True)
PY
{
  echo "# Exact pins of every Python package SF installs (direct and transitive)."
  echo "# Regenerate after changing pyproject.toml: scripts/lock.sh"
  "$tmp/venv/bin/pip" freeze
} > requirements.lock
echo "requirements.lock: $(grep -vc '^#' requirements.lock) packages"
