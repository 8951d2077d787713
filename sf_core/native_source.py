"""What the native module is built from: one definition for scripts/setup.sh (the key of
the cached wheel) and the doctor (is the installed module built from these sources?).

Content, never modification times: a fresh clone's files are all newer than a wheel
taken from the cache, and that is no reason to rebuild or to warn.

Standard library only: setup.sh runs it with the base interpreter, before the
virtualenv exists (``python sf_core/native_source.py native`` prints the key).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

# What a build reads: the crate, its build script, the Python package maturin wraps.
INPUTS = ("Cargo.toml", "Cargo.lock", "build.rs", "pyproject.toml", "src", "python")
MANIFEST_NAME = ".sf-native.json"


def manifest(native: Path) -> dict[str, str]:
    """Each input file (relative path) with the sha256 of its content."""
    files: dict[str, str] = {}
    for name in INPUTS:
        top = native / name
        paths = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in paths:
            if not path.is_file() or path.suffix == ".so" or "__pycache__" in path.parts:
                continue
            files[path.relative_to(native).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return dict(sorted(files.items()))


def key(files: dict[str, str], python_version: str = sys.version) -> str:
    """The cache key of a build: its inputs and the interpreter it is built for."""
    text = json.dumps({"files": files, "python": python_version}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def changed(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Files added, removed or edited since ``recorded``, sorted."""
    return sorted(
        path for path in recorded.keys() | current.keys() if recorded.get(path) != current.get(path)
    )


def main(argv: list[str]) -> int:
    """``native_source.py NATIVE_DIR [MANIFEST_OUT]``: print the key; write the manifest."""
    native = Path(argv[1])
    files = manifest(native)
    if len(argv) > 2:
        Path(argv[2]).write_text(json.dumps(files, indent=1) + "\n")
    print(key(files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
