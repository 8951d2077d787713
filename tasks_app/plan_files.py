"""Reading plan documents: YAML, JSON, or Markdown with YAML frontmatter.

Files come from people and scripts (``sf plan import``, ``sf headless --plan-file``,
the web's upload) and end up in PostgreSQL, so everything that would crash later is
refused here with one line naming the file: anything but a regular file (a FIFO would
block the reader forever), more than ``MAX_PLAN_BYTES``, bytes that are not UTF-8,
nesting deeper than a plan ever needs (a ``RecursionError`` in the parsers otherwise),
NUL characters and lone surrogates (PostgreSQL refuses both), and YAML values that JSON
cannot hold (``!!binary``, timestamps, sets).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from sf_core.errors import PlanInvalid, SfError
from tasks_app.schemas import PlanSpec, plan_spec_parse

MAX_PLAN_BYTES = 2 * 1024 * 1024
# plan > tasks > task > depends_on > dependency > field is six; leave room, stop early.
MAX_DOCUMENT_DEPTH = 32
# Values in one document, after YAML aliases are expanded (a 5,000-task plan is ~150k).
MAX_DOCUMENT_VALUES = 1_000_000
FRONTMATTER = "---"
_SCALARS = (str, int, float, bool, type(None))


class DocumentInvalid(SfError):
    """A file or parsed document that no SF reader accepts; the message names no file."""


def plan_file_read(path: str | Path) -> PlanSpec:
    """Parse and validate a plan file; every problem raises ``PlanInvalid`` naming it."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".md", ".markdown"):
        raise PlanInvalid(
            f"{path}: unknown plan format {suffix or '(none)'}; use .yaml, .json or .md"
        )
    try:
        text = text_file_read(path, limit=MAX_PLAN_BYTES)
        if suffix in (".yaml", ".yml"):
            data = yaml_parse(text)
        elif suffix == ".json":
            data = _json(text)
        else:
            data = _markdown(text)
        document_check(data)
    except DocumentInvalid as exc:
        raise PlanInvalid(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise PlanInvalid(
            f"{path}: a plan is a mapping with summary and tasks, got {type(data).__name__}"
        )
    return plan_spec_parse(data)


def text_file_read(path: Path, *, limit: int) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes.

    The file's kind is checked before it is opened, and again on the open descriptor
    (opened non-blocking, so a FIFO swapped in between cannot hang the reader)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DocumentInvalid("cannot read: no such file") from None
    except OSError as exc:
        raise DocumentInvalid(f"cannot read: {exc.strerror or exc}") from None
    _check_regular(info, limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise DocumentInvalid(f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        _check_regular(os.fstat(handle.fileno()), limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DocumentInvalid(f"larger than {limit // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentInvalid(f"not UTF-8 text (byte {exc.start} is not): a binary file?") from None
    if "\x00" in text:
        raise DocumentInvalid(f"has a NUL byte at offset {text.index(chr(0))}: a binary file?")
    return text


def _check_regular(info: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise DocumentInvalid(f"not a regular file ({_kind(info.st_mode)})")
    if info.st_size > limit:
        raise DocumentInvalid(f"larger than {limit // 1024} KiB")


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def document_check(data: Any) -> None:
    """Refuse what a parser let through but SF cannot store: deep nesting, values
    that are not JSON's, NUL characters and lone surrogates. Iterative, and bounded
    in depth and in values, so a self-referencing YAML alias ends here too."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    seen = 0
    while stack:
        value, where, depth = stack.pop()
        seen += 1
        if seen > MAX_DOCUMENT_VALUES:
            raise DocumentInvalid(f"more than {MAX_DOCUMENT_VALUES} values (YAML aliases?)")
        if depth > MAX_DOCUMENT_DEPTH:
            raise DocumentInvalid(
                f"nested deeper than {MAX_DOCUMENT_DEPTH} levels at {where or '(top)'}"
            )
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, _SCALARS):
                    raise DocumentInvalid(f"{where or '(top)'}: a key that is not text")
                inside = f"{where}.{field_name(key)}" if where else field_name(key)
                _check_text(str(key), inside)
                stack.append((item, inside, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            _check_text(value, where)
        elif not isinstance(value, _SCALARS):
            raise DocumentInvalid(
                f"{where or '(top)'}: a {type(value).__name__} value; only text, numbers, "
                "true/false, null, lists and mappings are accepted"
            )


def _check_text(text: str, where: str) -> None:
    if "\x00" in text:
        raise DocumentInvalid(f"{where or '(top)'}: a NUL character (\\0) is not allowed")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise DocumentInvalid(
            f"{where or '(top)'}: a lone surrogate (\\ud800-\\udfff) is not allowed"
        ) from None


def field_name(key: object) -> str:
    """A key as an error message shows it: on one line, and not 2 MB long."""
    text = str(key)
    if not text.isprintable() or not text:
        text = repr(text)
    return text if len(text) <= 40 else text[:37] + "..."


def yaml_parse(text: str) -> Any:
    """YAML (and so JSON) with every parser failure as one ``DocumentInvalid`` line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        raise DocumentInvalid(f"invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise DocumentInvalid(f"nested deeper than {MAX_DOCUMENT_DEPTH} levels") from None
    except ValueError as exc:  # an integer of more than 4,300 digits, a bad timestamp
        raise DocumentInvalid(f"invalid YAML: {_first_line(exc)}") from None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentInvalid(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise DocumentInvalid(f"nested deeper than {MAX_DOCUMENT_DEPTH} levels") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise DocumentInvalid(f"invalid JSON: {_first_line(exc)}") from None


def _markdown(text: str) -> Any:
    """Frontmatter holds the plan; the Markdown body is its intent (unless given)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FRONTMATTER:
        raise DocumentInvalid("a Markdown plan starts with a --- frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == FRONTMATTER)
    except StopIteration:
        raise DocumentInvalid("the frontmatter block is not closed with ---") from None
    data = yaml_parse("\n".join(lines[1:end]))
    body = "\n".join(lines[end + 1 :]).strip()
    if isinstance(data, dict) and body and not data.get("intent"):
        data["intent"] = body
    return data


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
