"""Type stubs for the compiled module ``sf_native._core`` (built from ``native/src``)."""

from typing import Any

__version__: str

class NativeError(Exception):
    """An error inside SF's native module that is not a type, value or path error."""

def canonical_json(obj: Any) -> str:
    """Canonical JSON text of a JSON-like value; see ``sf_native.canonical_json``."""

def canonical_hash(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``obj``; see ``sf_native.canonical_hash``."""
