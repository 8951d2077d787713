"""SF's native hot paths, implemented in Rust (``native/src``) and exposed here.

The compiled module ``sf_native._core`` is private; import from ``sf_native``.
Long calls release the GIL, and Ctrl-C interrupts the walking ones. Errors are
Python's own where one fits (``FileNotFoundError``, ``NotADirectoryError``,
``ValueError`` for a bad pattern, ``TypeError``) and :class:`NativeError`
otherwise.

``walk``, ``glob``, ``grep`` and ``find_files`` all walk the same way: regular
files only, paths relative to ``root`` with ``/`` separators, sorted;
``.gitignore`` / ``.ignore`` / ``.git/info/exclude`` and the global git excludes
honoured (``ignore_files=False`` turns that off); hidden files skipped unless
``hidden=True``; ``.git`` never entered; symbolic links skipped unless
``follow_links=True``. The walk runs on ``threads`` threads (0: one per CPU) with
the GIL released, and Ctrl-C interrupts it (``KeyboardInterrupt``). Their
arguments after the first one or two are keyword-only, declared in Rust
(``native/src/py/files.rs``; ``_core.pyi`` types them), so these are the compiled
functions themselves.

``include`` / ``exclude`` take one glob or a sequence of them, following gitignore
habits: a glob without ``/`` matches a file or directory name at any depth
(``*.py``, ``node_modules``), a glob with ``/`` matches the whole relative path
(``src/**/*.rs``). ``exclude`` also prunes whole directories.
"""

from __future__ import annotations

from typing import Any

from sf_native import _core
from sf_native._core import (
    EditAmbiguous,
    EditNoMatch,
    FileMatch,
    GrepMatch,
    NativeError,
    find_files,
    glob,
    grep,
    unified_diff,
    walk,
)
from sf_native._text import (
    DEFAULT_EDIT_THRESHOLD,
    SECRET_KINDS,
    DiffStats,
    EditResult,
    Finding,
    Redaction,
    apply_edit,
    diff_stats,
    redact,
)

__version__: str = _core.__version__

__all__ = [
    "DEFAULT_EDIT_THRESHOLD",
    "SECRET_KINDS",
    "DiffStats",
    "EditAmbiguous",
    "EditNoMatch",
    "EditResult",
    "FileMatch",
    "Finding",
    "GrepMatch",
    "NativeError",
    "Redaction",
    "__version__",
    "apply_edit",
    "canonical_hash",
    "canonical_json",
    "diff_stats",
    "find_files",
    "glob",
    "grep",
    "redact",
    "unified_diff",
    "walk",
]


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of a JSON-like value (RFC 8785 style).

    Object keys are sorted by UTF-16 code units, there is no insignificant
    whitespace, strings are UTF-8 with only ``"``, ``\\`` and control characters
    escaped, floats take their shortest round-trip ECMAScript form (``1.0`` is
    ``1``) and integers are exact. ``dict`` keys must be ``str``; ``list`` and
    ``tuple`` are arrays.

    Raises ``TypeError`` for a value JSON cannot hold (a set, bytes, an object, a
    non-str key) and ``ValueError`` for NaN, infinities, lone surrogates or nesting
    deeper than 512 levels (which is also how a circular reference ends).
    """
    return _core.canonical_json(obj)


def canonical_hash(obj: Any) -> str:
    """Lower-case hex SHA-256 of :func:`canonical_json` of ``obj``.

    Equal values hash the same whatever their key order; errors as for
    :func:`canonical_json`.
    """
    return _core.canonical_hash(obj)
