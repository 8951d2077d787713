"""Cargo's build of the native crate, judged by content across checkouts that share one
target directory (scripts/test.sh: ``~/.cache/sf/cargo-target``).

Cargo takes a path crate (native/) as up to date when none of its sources is newer than
the last build. A fresh clone's files are all new: each clone compiled the crate again
and clippy checked it again although nothing had changed (30 to 40 s of CI). And a checkout
whose files are older than a build made from another checkout's different sources took
that build for its own. Here content decides, and Cargo still does the rest:

- ``restore``, before Cargo runs: each source whose content is the one Cargo last saw
  in this target directory gets back the modification time Cargo saw then; every other
  source gets the current time, so Cargo rebuilds what it reads.
- ``record``, after Cargo ran: what it saw (each source's hash and time) and a stamp of
  the crate's fingerprints in the target directory. If anything else builds the crate
  there before the next ``restore`` (the stamp differs), every source is made new: a
  rebuild, never a stale result.
- ``touch``: every source made new (scripts/setup.sh before a release build, which has
  no record of its own).

scripts/test.sh holds a lock on the target directory from ``restore`` to ``record``.
Standard library only: setup.sh runs it with the base interpreter.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from sf_core.native_source import INPUTS

RECORD_NAME = "sf-native-sources.json"
# The profile clippy and cargo test build; release builds are maturin's (setup.sh).
FINGERPRINTS = Path("debug") / ".fingerprint"
CRATE = "sf_native"


def sources(native: Path) -> dict[str, tuple[str, int]]:
    """Each file Cargo may read (relative path): the sha256 of its content, its mtime in ns."""
    found: dict[str, tuple[str, int]] = {}
    for name in INPUTS:
        top = native / name
        paths = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in paths:
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[path.relative_to(native).as_posix()] = (digest, path.stat().st_mtime_ns)
    return found


def fingerprint_stamp(target: Path) -> str:
    """How many fingerprint files the crate has in the target directory, and the newest
    one's mtime: any build of the crate there since the record changes it."""
    files = [
        path
        for folder in (target / FINGERPRINTS).glob(f"{CRATE}-*")
        for path in folder.rglob("*")
        if path.is_file()
    ]
    newest = max((path.stat().st_mtime_ns for path in files), default=0)
    return f"{len(files)}:{newest}"


def _read_record(target: Path) -> dict[str, object]:
    try:
        data = json.loads((target / RECORD_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def restore(native: Path, target: Path, now_ns: int | None = None) -> list[str]:
    """Give unchanged sources the times Cargo last saw; the others (all of them if the
    record is missing or the crate was built since) the current time. Returns those."""
    now = time.time_ns() if now_ns is None else now_ns
    record = _read_record(target)
    seen = record.get("files") if record.get("stamp") == fingerprint_stamp(target) else None
    seen = seen if isinstance(seen, dict) else {}
    stale = []
    for relative, (digest, _mtime) in sources(native).items():
        before = seen.get(relative)
        if isinstance(before, list) and len(before) == 2 and before[0] == digest:
            when = int(before[1])
        else:
            when = now
            stale.append(relative)
        os.utime(native / relative, ns=(when, when))
    return stale


def record(native: Path, target: Path) -> None:
    """Write down what Cargo saw, with the crate's fingerprint stamp (atomically)."""
    data = {"files": sources(native), "stamp": fingerprint_stamp(target)}
    target.mkdir(parents=True, exist_ok=True)
    partial = target / f"{RECORD_NAME}.{os.getpid()}"
    partial.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    partial.replace(target / RECORD_NAME)


def touch(native: Path) -> None:
    """Every source made new: Cargo rebuilds the crate whatever the target holds."""
    now = time.time_ns()
    for relative in sources(native):
        os.utime(native / relative, ns=(now, now))


def main(argv: list[str]) -> int:
    """``python -m sf_core.cargo_freshness restore|record NATIVE TARGET`` or ``touch NATIVE``."""
    usage = (
        "usage: python -m sf_core.cargo_freshness restore|record NATIVE_DIR TARGET_DIR"
        " | touch NATIVE_DIR"
    )
    if len(argv) == 3 and argv[1] == "touch":
        touch(Path(argv[2]))
        return 0
    if len(argv) != 4 or argv[1] not in ("restore", "record"):
        print(usage, file=sys.stderr)
        return 2
    native, target = Path(argv[2]), Path(argv[3])
    if argv[1] == "record":
        record(native, target)
        return 0
    stale = restore(native, target)
    print(f"cargo freshness: {len(stale)} native source(s) new to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
