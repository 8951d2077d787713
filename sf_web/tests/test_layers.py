"""The dependency direction, checked from the source: imports inside functions count.

``agents_app`` is the base; ``tasks_app`` is built on it and announces to it nothing
but signals (``sf_web/signals.py``). Inside ``tasks_app`` no two modules import each
other, directly or around a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def source_files(package: str, *, tests: bool = False) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if (tests or "tests" not in parts) and "migrations" not in parts:
            yield path


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, wherever the import statement is, except under
    ``if TYPE_CHECKING:`` (never executed)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING")
        for statement in block.body
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if is_module(candidate) else node.module)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_base_app_never_imports_the_app_built_on_it() -> None:
    offenders = {
        module_name(path): sorted(m for m in imported(path) if m.split(".")[0] == "tasks_app")
        for path in source_files("agents_app", tests=True)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_tasks_app_has_no_import_circles() -> None:
    graph = {
        module_name(path): {m for m in imported(path) if m.split(".")[0] == "tasks_app"}
        for path in source_files("tasks_app")
    }
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle_held_by_a_function_import(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from tasks_app.engine import dispatch\n")
    assert imported(lazy) == {"tasks_app.engine.dispatch"}
