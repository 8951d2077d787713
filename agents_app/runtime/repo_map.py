"""A compact map of a repository for a model's first prompt: its files, and the
top-level symbols of its Python files, within a character budget.

A model that sees the tree does not guess paths (``src/mathutils.py`` in a repository
whose module is ``mathutils.py``). The files come from the native walker
(``sf_native.walk``: ``.gitignore`` honoured, hidden files and ``.git`` skipped); the
symbols from Python's own ``ast`` (functions with their parameters, classes with their
methods), so a file that does not parse is listed without them. Past the budget the map
ends with how many files it left out, never in the middle of a line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sf_native

DEFAULT_BUDGET = 2_000  # characters: ~600 tokens, small beside an 8k window
MAX_FILES = 2_000  # a bigger tree is listed by its first files only
MAX_PARSE_BYTES = 200_000  # a generated module is listed without its symbols
MAX_METHODS = 8


def repo_map(root: str | Path, *, budget: int = DEFAULT_BUDGET) -> str:
    """The map of ``root``, one file a line (``path: def f(a, b); class C(m1, m2)``)."""
    try:
        files = sf_native.walk(root, max_depth=8)[:MAX_FILES]
    except (FileNotFoundError, NotADirectoryError):
        return ""
    lines: list[str] = []
    used = 0
    for index, relative in enumerate(files):
        line = _line(Path(root), relative)
        if used + len(line) + 1 > budget:
            lines.append(f"… and {len(files) - index} more files")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _line(root: Path, relative: str) -> str:
    if not relative.endswith(".py"):
        return relative
    symbols = python_symbols(root / relative)
    return f"{relative}: {'; '.join(symbols)}" if symbols else relative


def python_symbols(path: Path) -> list[str]:
    """The top-level functions and classes of a Python file, as ``def f(a, b)`` and
    ``class C(m1, m2)``; none when it cannot be read or parsed."""
    try:
        if path.stat().st_size > MAX_PARSE_BYTES:
            return []
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    symbols = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            symbols.append(f"def {node.name}({_parameters(node)})")
        elif isinstance(node, ast.ClassDef):
            methods = [
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and not (item.name.startswith("__") and item.name != "__init__")
            ][:MAX_METHODS]
            symbols.append(f"class {node.name}({', '.join(methods)})")
    return symbols


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    arguments = node.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg:
        names.append(f"*{arguments.vararg.arg}")
    names += [a.arg for a in arguments.kwonlyargs]
    if arguments.kwarg:
        names.append(f"**{arguments.kwarg.arg}")
    return ", ".join(names)
