"""The table of signals in docs/architecture.md against the code: every signal of
``sf_core.signals`` and ``sf_core.notices`` has a row, and each row names every module
that sends it and every module whose function receives it (read from the code's own
``send``/``send_on_commit``/``collect``/``notice_raise`` calls and its ``connect``
calls and ``@receiver`` decorators)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_architecture import ROOT, _modules

SIGNAL_MODULES = (ROOT / "sf_core/signals.py", ROOT / "sf_core/notices.py")
DOC = ROOT / "docs/architecture.md"
# Helpers that take the signal as their first argument and send it.
SENDING_HELPERS = {"send_on_commit", "collect"}
# ``notice_raise(notice)`` sends ``notice_raised`` (sf_core.notices).
SENDING_CALLS = {"notice_raise": "notice_raised"}


def _signals() -> set[str]:
    names: set[str] = set()
    for path in SIGNAL_MODULES:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and "Signal()" in ast.unparse(node.value):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _imported(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it was imported as (``from a.b import c`` -> a.b.c)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _receiver_module(argument: ast.expr, module: str, imported: dict[str, str]) -> str:
    """The module that defines the function passed to ``connect``."""
    if isinstance(argument, ast.Name):
        dotted = imported.get(argument.id)
        return dotted.rpartition(".")[0] if dotted else module
    if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name):
        return imported.get(argument.value.id, argument.value.id)
    raise AssertionError(f"{module}: cannot read the receiver {ast.unparse(argument)}")


def _uses(
    signals: set[str], modules: dict[str, Path] | None = None
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(senders, receivers): for each signal, the modules that send it / receive it."""
    senders: dict[str, set[str]] = {name: set() for name in signals}
    receivers: dict[str, set[str]] = {name: set() for name in signals}
    for module, path in (_modules() if modules is None else modules).items():
        if module in ("sf_core.signals", "sf_core.notices"):
            continue  # where the signals and their sending helpers are defined
        tree = ast.parse(path.read_text())
        imported = _imported(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    if (
                        isinstance(decorator, ast.Call)
                        and ast.unparse(decorator.func) == "receiver"
                    ):
                        first = ast.unparse(decorator.args[0])
                        if first in signals:
                            receivers[first].add(module)
            if not isinstance(node, ast.Call):
                continue
            func, args = node.func, node.args
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = func.value.id
                if name in signals and func.attr in ("send", "send_robust"):
                    senders[name].add(module)
                elif name in signals and func.attr == "connect":
                    receivers[name].add(_receiver_module(args[0], module, imported))
            elif isinstance(func, ast.Name):
                if func.id in SENDING_HELPERS and args and ast.unparse(args[0]) in signals:
                    senders[ast.unparse(args[0])].add(module)
                elif func.id in SENDING_CALLS:
                    senders[SENDING_CALLS[func.id]].add(module)
    return senders, receivers


def _table() -> dict[str, tuple[str, str]]:
    """Signal -> (sent by, received by), as the doc's table says."""
    rows: dict[str, tuple[str, str]] = {}
    text = DOC.read_text()
    start = text.index("| signal (`sf_core/signals.py`)")
    table = text[start:].split("\n\n", 1)[0]  # up to the first blank line
    for line in table.splitlines():
        match = re.match(r"\|\s*`(\w+)\(.*?\)`[^|]*\|([^|]*)\|([^|]*)\|\s*$", line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3))
    return rows


def test_every_signal_has_a_row_naming_its_senders_and_receivers() -> None:
    signals = _signals()
    assert {"session_runnable", "notice_raised", "sweep_due"} <= signals
    table = _table()
    assert set(table) == signals, "rows in docs/architecture.md differ from the signals"
    senders, receivers = _uses(signals)
    wrong = [
        f"{name}: {side} does not name {module}"
        for name in sorted(signals)
        for side, found, cell in (
            ("sent by", senders[name], table[name][0]),
            ("received by", receivers[name], table[name][1]),
        )
        for module in sorted(found)
        if f"`{module}" not in cell
    ]
    assert not wrong, "docs/architecture.md's signal table:\n" + "\n".join(wrong)
    assert all(senders.values()), f"a signal nobody sends: {senders}"
    assert all(receivers.values()), f"a signal nobody receives: {receivers}"


def test_a_planted_sender_and_receiver_are_read(tmp_path: Path) -> None:
    """A send and a connect the table does not name are read from the code (so the
    check above can fail)."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from sf_core.signals import send_on_commit, sweep_due\n"
        "from notify_app.outbox import on_notice_raised\n"
        "def go():\n"
        "    send_on_commit(sweep_due, sender=None)\n"
        "    notice_raised.connect(on_notice_raised)\n"
    )
    senders, receivers = _uses(_signals(), {"somewhere.planted": planted})
    assert senders["sweep_due"] == {"somewhere.planted"}
    assert receivers["notice_raised"] == {"notify_app.outbox"}
    assert "`somewhere.planted" not in _table()["sweep_due"][0]
