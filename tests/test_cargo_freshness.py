"""sf_core/cargo_freshness.py: a fresh clone with the sources Cargo last saw gets their
times back (nothing to rebuild); anything else is made new (Cargo rebuilds it)."""

from __future__ import annotations

import os
from pathlib import Path

from sf_core import cargo_freshness

OLD = 1_000_000_000 * 10**9  # 2001: long before any build
LATER = 2_000_000_000 * 10**9


def _crate(root: Path, lib: str = "pub fn f() {}\n") -> Path:
    native = root / "native"
    (native / "src").mkdir(parents=True)
    (native / "Cargo.toml").write_text('[package]\nname = "sf_native"\n')
    (native / "src" / "lib.rs").write_text(lib)
    (native / "src" / "walk.rs").write_text("pub fn walk() {}\n")
    return native


def _built(target: Path) -> None:
    """What a build of the crate leaves: a fingerprint file."""
    folder = target / "debug" / ".fingerprint" / "sf_native-0123"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lib-sf_native").write_text("fingerprint")


def _mtime(path: Path) -> int:
    return path.stat().st_mtime_ns


def test_a_clone_of_the_same_sources_gets_the_recorded_times(tmp_path: Path) -> None:
    first, target = _crate(tmp_path / "a"), tmp_path / "target"
    for path in (first / "Cargo.toml", first / "src" / "lib.rs", first / "src" / "walk.rs"):
        os.utime(path, ns=(OLD, OLD))
    _built(target)
    cargo_freshness.record(first, target)
    clone = _crate(tmp_path / "b")  # files written now: Cargo would take them as new
    assert cargo_freshness.restore(clone, target, now_ns=LATER) == []
    assert _mtime(clone / "src" / "lib.rs") == OLD
    assert _mtime(clone / "Cargo.toml") == OLD


def test_changed_and_added_sources_are_made_new(tmp_path: Path) -> None:
    first, target = _crate(tmp_path / "a"), tmp_path / "target"
    _built(target)
    cargo_freshness.record(first, target)
    clone = _crate(tmp_path / "b", lib="pub fn f() -> u8 { 1 }\n")
    (clone / "build.rs").write_text("fn main() {}\n")
    stale = cargo_freshness.restore(clone, target, now_ns=LATER)
    assert stale == ["build.rs", "src/lib.rs"]
    assert _mtime(clone / "src" / "lib.rs") == LATER
    assert _mtime(clone / "src" / "walk.rs") == _mtime(first / "src" / "walk.rs")


def test_a_build_since_the_record_or_no_record_makes_every_source_new(tmp_path: Path) -> None:
    first, target = _crate(tmp_path / "a"), tmp_path / "target"
    clone = _crate(tmp_path / "b")
    assert len(cargo_freshness.restore(clone, target, now_ns=LATER)) == 3  # no record
    _built(target)
    cargo_freshness.record(first, target)
    # Another checkout built the crate in the target without this script: its
    # fingerprints changed, and what the record says Cargo saw is no longer true.
    fingerprint = target / "debug" / ".fingerprint" / "sf_native-0123" / "lib-sf_native"
    os.utime(fingerprint, ns=(LATER, LATER))
    assert len(cargo_freshness.restore(clone, target, now_ns=LATER + 1)) == 3
    assert _mtime(clone / "src" / "walk.rs") == LATER + 1
