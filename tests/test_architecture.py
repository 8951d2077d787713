"""The shape of the house, checked from the code's own imports and definitions.

- No import circles among first-party modules, counting imports inside functions
  (an in-function import that closes a circle is still a circle; only imports under
  ``if TYPE_CHECKING:`` are left out, because they never run).
- Dependencies point one way, down the layers below: the kernel imports no app, the
  base app (sessions, gate, runtime) never imports the apps built on it.
- Inside the two big apps too: each part imports only its own and the parts below it
  (``PARTS``: tasks_app's domain < engine < features < surfaces; agents_app's
  sessions < gate < runtime < services < surfaces).
- Schemas too: an app's models and migrations name no model of an app above it and
  depend on no migration of one (a string ties tables together without an import).
- No function over 60 lines and no module over 500 lines, outside migrations and
  data tables.

docs/architecture.md draws the same layers for people.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first: a package may import its own layer and the layers before it.
LAYERS: tuple[str, ...] = (
    "sf_native",
    "sf_core",
    "agents_app",
    "skills_app",
    "tasks_app",
    "notify_app",
    "dashboard_app",
    "api_app",
    "mcp_app",
    "sf_web",
)
# Inside an app, its parts, lowest first: (part, the names under the app that belong to
# it). "" is every other module of the app (its root). Sub-packages carry the layer in
# their folder name; the few root modules listed with a surface are the ones Django
# finds by name at the app's root (apps, admin, urls, tasks) or the pages and checks
# that sit beside them in agents_app.
PARTS: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "tasks_app": (
        ("domain", frozenset({""})),
        ("engine", frozenset({"engine"})),
        ("features", frozenset({"features"})),
        ("surfaces", frozenset({"surfaces", "apps", "admin", "urls", "tasks"})),
    ),
    "agents_app": (
        ("sessions", frozenset({""})),
        ("gate", frozenset({"gate"})),
        ("runtime", frozenset({"runtime"})),
        ("services", frozenset({"services"})),
        (
            "surfaces",
            frozenset(
                {"apps", "admin", "urls", "views", "consumers", "cli", "forms", "templatetags"}
                | {"preflight", "costs", "sandbox_checks", "egress_checks", "doctor_checks"}
            ),
        ),
    ),
}
SOURCE_DIRS = {name: ROOT / name for name in LAYERS} | {
    "sf_native": ROOT / "native/python/sf_native"
}
# Everything else with Python in it, held to the size limits.
OTHER_DIRS = ("tests", "benchmarks", "scripts", "examples", "native/tests")

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500
# Tables of data, not code: their length is their content.
DATA_TABLES = frozenset({"agents_app/tests/bypass_corpus.py", "native/tests/redaction_corpus.py"})


def _python_files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.rglob("*.py")):
        if "migrations" in path.parts or "target" in path.parts:
            continue
        yield path


def _module_name(path: Path) -> str:
    for package, directory in SOURCE_DIRS.items():
        if path.is_relative_to(directory):
            parts = [package, *path.relative_to(directory).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise ValueError(path)


@cache
def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for directory in SOURCE_DIRS.values():
        if not directory.is_dir():
            continue
        for path in _python_files(directory):
            if "tests" in path.relative_to(directory).parts:
                continue  # tests may import anything; they are not part of the graph
            found[_module_name(path)] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(module: str, path: Path) -> set[str]:
    """First-party modules that ``module`` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_lines(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` imports the submodule when there is one (a compiled
            # one such as ``sf_native._core`` is not ours to follow).
            parent, _, last = base.rpartition(".")
            for alias in node.names:
                compiled = _is_compiled(parent, last) or _is_compiled(base, alias.name)
                targets.add("" if compiled else f"{base}.{alias.name}")
                targets.add("" if compiled else base)
    modules = _modules()
    return {_known(target, modules) for target in targets} - {"", module}


def _is_compiled(package: str, name: str) -> bool:
    directory = SOURCE_DIRS.get(package)
    return directory is not None and (directory / f"{name}.pyi").exists()


def _known(target: str, modules: dict[str, Path]) -> str:
    """The longest first-party module that ``target`` names, or ''."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target


@cache
def _graph() -> dict[str, set[str]]:
    return {module: _imports(module, path) for module, path in _modules().items()}


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A shortest import circle through ``start``, or None."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for module in frontier:
            for target in sorted(graph.get(module, ())):
                if target == start:
                    return [*paths[module], start]
                if target not in paths:
                    paths[target] = [*paths[module], target]
                    following.append(target)
        frontier = following
    return None


def test_the_graph_is_read() -> None:
    """The checks below mean something only if the graph has the house in it."""
    graph = _graph()
    assert "tasks_app.models" in graph
    assert "agents_app.models" in graph["agents_app.services.sessions"]
    assert "sf_core.errors" in graph


def test_no_import_circles() -> None:
    graph = _graph()
    circles = {" -> ".join(c) for m in graph if (c := _cycle_from(m, graph)) and c[0] == min(c)}
    assert not circles, "import circles:\n" + "\n".join(sorted(circles))


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_dependencies_point_down_the_layers() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert not upward, (
        "imports against the layers " + " < ".join(LAYERS) + ":\n" + "\n".join(upward)
    )


def _part(module: str) -> int | None:
    """The index of ``module``'s part in ``PARTS`` (None outside the apps listed)."""
    app, _, rest = module.partition(".")
    if app not in PARTS:
        return None
    first = rest.partition(".")[0]
    for index, (_name, names) in enumerate(PARTS[app]):
        if first in names:
            return index
    return 0


def back_imports(graph: dict[str, set[str]]) -> set[str]:
    """Imports from a part of an app to a part above it in the same app."""
    return {
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if module.partition(".")[0] == target.partition(".")[0]
        and (low := _part(module)) is not None
        and (high := _part(target)) is not None
        and high > low
    }


def test_inside_the_apps_dependencies_point_down_the_parts() -> None:
    found = sorted(back_imports(_graph()))
    order = {app: " < ".join(name for name, _ in parts) for app, parts in PARTS.items()}
    assert not found, f"imports against the parts {order}:\n" + "\n".join(found)


def test_a_planted_back_import_inside_each_app_is_found() -> None:
    """The real graph, plus one import from a lower part to a higher one in each app."""
    planted = {
        "tasks_app.engine.outcome": "tasks_app.features.forge",
        "tasks_app.models": "tasks_app.engine.dispatch",
        "tasks_app.features.forge": "tasks_app.surfaces.views",
        "agents_app.gate.session": "agents_app.runtime.loop",
        "agents_app.models": "agents_app.gate.policy",
        "agents_app.runtime.loop": "agents_app.services.sessions",
        "agents_app.services.sessions": "agents_app.views",
    }
    graph = {module: set(targets) for module, targets in _graph().items()}
    for module, target in planted.items():
        assert module in graph, f"{module} moved"
        assert target in graph, f"{target} moved"
        assert target not in graph[module], f"{module} imports {target} already"
        graph[module].add(target)
    found = back_imports(graph) - back_imports(_graph())
    assert found == {f"{module} imports {target}" for module, target in planted.items()}
    # Downward and sideways imports are not reported.
    assert not back_imports({"tasks_app.features.forge": {"tasks_app.engine.review"}})
    assert not back_imports({"tasks_app.engine.unit": {"agents_app.runtime.loop"}})


def test_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle_from("a", graph) == ["a", "b", "c", "a"]
    assert _cycle_from("d", graph) is None


def _all_sources() -> Iterator[Path]:
    for directory in [*SOURCE_DIRS.values(), *(ROOT / d for d in OTHER_DIRS)]:
        if directory.is_dir():
            yield from _python_files(directory)
    yield ROOT / "conftest.py"
    yield ROOT / "manage.py"


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_no_module_over_the_limit() -> None:
    long = [
        f"{_relative(p)}: {n} lines"
        for p in _all_sources()
        if _relative(p) not in DATA_TABLES
        and (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, "\n".join(long)


def _long_functions(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                yield f"{_relative(path)}:{node.lineno} {node.name}: {length} lines"


def test_no_function_over_the_limit() -> None:
    long = [line for path in _all_sources() for line in _long_functions(path)]
    assert not long, "\n".join(long)


def _schema_files(app_dir: Path) -> Iterator[Path]:
    """An app's models and migrations: where its tables name other apps' tables."""
    yield from sorted(app_dir.glob("models.py"))
    yield from sorted(app_dir.glob("models/*.py"))
    yield from sorted(app_dir.glob("migrations/*.py"))


def upward_references(app: str, paths: Iterator[Path]) -> set[str]:
    """Models named as 'app.Model' and migration dependencies (app, name) on higher apps.

    An import is not needed to tie one app's schema to another's: a string does it.
    """
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            where = _relative(path) if path.is_relative_to(ROOT) else str(path)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                other, dot, model = node.value.partition(".")
                if dot and other in LAYERS and model.isidentifier() and _above(other, app):
                    found.add(f"{where} names {node.value}")
            elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
                first = node.elts[0]
                if (
                    isinstance(first, ast.Constant)
                    and first.value in LAYERS
                    and _above(str(first.value), app)
                ):
                    found.add(f"{where} depends on {first.value}")
    return found


def _above(other: str, app: str) -> bool:
    return LAYERS.index(other) > LAYERS.index(app)


def test_schemas_and_migrations_point_down_the_layers() -> None:
    """Each app's tables and migrations stand on the apps below it only: agents_app's and
    skills_app's migrate on a database without tasks_app (tests/test_migrations_standalone.py)."""
    found = {
        reference
        for app in LAYERS
        if app not in ("sf_native", "sf_core")
        for reference in upward_references(app, _schema_files(ROOT / app))
    }
    assert not found, "\n".join(sorted(found))


def test_an_upward_reference_in_a_schema_is_found() -> None:
    """agents_app's and skills_app's migrations before they stood alone, kept for the
    upgrade tests; and skills_app's models as they were."""
    before = sorted((ROOT / "tests/upgrade/migrations/agents_app_before").glob("0*.py"))
    found = {line.partition(" ")[2] for line in upward_references("agents_app", iter(before))}
    assert found == {"names tasks_app.unit", "depends on tasks_app"}
    assert not upward_references("tasks_app", iter(before))  # below is fine
    skills = sorted((ROOT / "tests/upgrade/migrations/skills_app_before").glob("0*.py"))
    found = {line.partition(" ")[2] for line in upward_references("skills_app", iter(skills))}
    assert found == {"names tasks_app.unit", "names tasks_app.task", "depends on tasks_app"}
