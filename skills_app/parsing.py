"""Reading one skill folder from disk: its ``SKILL.md`` frontmatter and body, its
supporting files and its eval cases. Pure file work, no database: ``sync`` stores what
this finds.

Every problem is a ``SkillInvalid`` naming the file and what is wrong with it.
"""

from __future__ import annotations

import errno
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from sf_core.beneath import read_beneath
from sf_core.errors import SfError
from skills_app.schemas import SkillFrontmatter

PROJECT_SKILLS = Path(".agents") / "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 64 * 1024  # a SKILL.md larger than this is refused, not truncated
MAX_FILE_BYTES = 256 * 1024  # a supporting file larger than this is refused
MAX_FILES = 200  # supporting files per skill
SUPPORTING_DIRS = ("scripts", "schemas", "checklists")
MCP_FILE = "mcp.json"
EVALS = "evals"
CASE_PROMPT = "task.md"
CASE_GRADER = "grader.py"
CASE_TRACE = "trace.jsonl"


class SkillInvalid(SfError):
    """A skill folder that cannot be used: the message names the file and the problem."""


@dataclass(frozen=True)
class CaseFiles:
    name: str
    path: Path
    prompt: str
    has_work: bool
    has_hidden: bool
    has_trace: bool
    problem: str = ""


@dataclass(frozen=True)
class SkillFiles:
    """One skill folder as read: valid (``meta`` set) or not (``problem`` set)."""

    name: str  # the folder's name
    path: Path  # the SKILL.md
    digest: str
    meta: SkillFrontmatter | None = None
    problem: str = ""
    files: list[tuple[str, int]] = field(default_factory=list)
    cases: list[CaseFiles] = field(default_factory=list)


def skill_folders(root: Path) -> list[Path]:
    """The skill folders under ``root`` (a ``.agents/skills`` or a user folder)."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
    )


def skill_read(folder: Path, target: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``target`` inside the skill folder ``folder``, reached
    from the folder's parent without following a link (``sf_core.beneath``).

    A project's skills come from a repository agents write to (a merged change, or the
    unit's own worktree), and SF reads them with its own rights (root, as
    ``scripts/run.sh`` runs it): a link there would bring a host file (the checkout's
    ``.sf/env``, ``/etc/shadow``) into a skill shown on the web and given to models.
    A link on the way, or the file itself a link, fails with ``OSError`` (ELOOP).
    """
    return read_beneath(folder.parent, target, limit)


def folder_digest(folder: Path) -> tuple[str, bytes | None]:
    """A hash of what sync depends on: SKILL.md's bytes and every other file's path and
    size (read only when SKILL.md changed). Cheap enough to run before every unit."""
    digest = hashlib.sha256()
    skill_file = folder / SKILL_FILE
    raw: bytes | None = None
    try:
        size = skill_file.lstat().st_size
        if skill_file.is_symlink():
            digest.update(b"link")
        elif size <= MAX_SKILL_BYTES:
            raw = skill_read(folder, skill_file, MAX_SKILL_BYTES)
            digest.update(raw)
        else:
            digest.update(f"oversized {size}".encode())
    except OSError:
        digest.update(b"missing")
    for path in sorted(folder.rglob("*")):  # rglob enters no linked directory
        if path != skill_file and (path.is_file() or path.is_symlink()):
            digest.update(f"\0{path.relative_to(folder)}\0{path.lstat().st_size}".encode())
    return digest.hexdigest(), raw


def skill_parse(folder: Path, *, digest: str, raw: bytes | None) -> SkillFiles:
    """Read ``folder`` whose ``folder_digest`` gave ``digest`` and ``raw``."""
    path = folder / SKILL_FILE
    try:
        meta = _frontmatter(path, raw)
        files = _supporting(folder)
    except SkillInvalid as exc:
        return SkillFiles(name=folder.name, path=path, digest=digest, problem=str(exc))
    return SkillFiles(
        name=folder.name, path=path, digest=digest, meta=meta, files=files, cases=_cases(folder)
    )


def skill_body(path: Path, raw: bytes | None = None) -> str:
    """The instructions after the frontmatter of the SKILL.md at ``path``; ``raw``: its
    bytes as the caller read them (up to one more than ``MAX_SKILL_BYTES``)."""
    if raw is None:
        raw = _read_limited(path.parent, path, MAX_SKILL_BYTES)
    elif len(raw) > MAX_SKILL_BYTES:
        raise SkillInvalid(f"{path}: more than the {MAX_SKILL_BYTES} bytes allowed")
    return _split(raw.decode("utf-8", errors="replace"), path)[1]


def _frontmatter(path: Path, raw: bytes | None) -> SkillFrontmatter:
    if path.is_symlink():
        raise SkillInvalid(f"{path}: a symbolic link; SF follows no link in a skill folder")
    if not path.is_file():
        raise SkillInvalid(f"{path}: the folder has no {SKILL_FILE}")
    if raw is None:
        size = path.stat().st_size
        raise SkillInvalid(f"{path}: {size} bytes, more than the {MAX_SKILL_BYTES} allowed")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillInvalid(f"{path}: not UTF-8 text") from None
    data, _ = _split(text, path)
    try:
        meta = SkillFrontmatter.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'frontmatter'}: {e['msg']}" for e in exc.errors()
        )
        raise SkillInvalid(f"{path}: {problems}") from None
    if meta.name != path.parent.name:
        raise SkillInvalid(f"{path}: name {meta.name!r} must match its folder {path.parent.name!r}")
    return meta


def _supporting(folder: Path) -> list[tuple[str, int]]:
    """Supporting files: ``scripts/``, ``schemas/``, ``checklists/`` and ``mcp.json``."""
    found: list[tuple[str, int]] = []
    candidates = [folder / MCP_FILE] if (folder / MCP_FILE).is_file() else []
    for name in SUPPORTING_DIRS:
        if (folder / name).is_symlink():
            candidates.append(folder / name)
        elif (folder / name).is_dir():
            found_here = (folder / name).rglob("*")  # rglob enters no linked directory
            candidates += sorted(p for p in found_here if p.is_file() or p.is_symlink())
    for path in candidates:
        if path.is_symlink():
            raise SkillInvalid(f"{path}: a symbolic link; SF follows no link in a skill folder")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SkillInvalid(f"{path}: {size} bytes, more than the {MAX_FILE_BYTES} allowed")
        found.append((path.relative_to(folder).as_posix(), size))
    if len(found) > MAX_FILES:
        raise SkillInvalid(f"{folder}: {len(found)} supporting files, at most {MAX_FILES}")
    return found


def _cases(folder: Path) -> list[CaseFiles]:
    cases: list[CaseFiles] = []
    for case in skill_folders(folder / EVALS):
        prompt_file, problem = case / CASE_PROMPT, ""
        if not prompt_file.is_file():
            problem = f"{case}: the case has no {CASE_PROMPT}"
        elif not (case / CASE_GRADER).is_file():
            problem = f"{case}: the case has no {CASE_GRADER}"
        prompt = ""
        if prompt_file.is_file():
            raw = _read_limited(folder, prompt_file, MAX_FILE_BYTES)
            prompt = raw.decode("utf-8", "replace")
        cases.append(
            CaseFiles(
                name=case.name,
                path=case,
                prompt=prompt,
                has_work=(case / "work").is_dir(),
                has_hidden=(case / "hidden").is_dir(),
                has_trace=(case / CASE_TRACE).is_file(),
                problem=problem,
            )
        )
    return cases


def _read_limited(folder: Path, path: Path, limit: int) -> bytes:
    raw = skill_read(folder, path, limit + 1)
    if len(raw) > limit:
        raise SkillInvalid(f"{path}: more than the {limit} bytes allowed")
    return raw


def _split(text: str, path: Path) -> tuple[dict[str, object], str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillInvalid(f"{path}: {SKILL_FILE} must start with a --- frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillInvalid(f"{path}: the frontmatter block is not closed with ---") from None
    try:
        data = yaml.load("\n".join(lines[1:end]), Loader=_LOADER) or {}
    except yaml.YAMLError as exc:
        raise SkillInvalid(f"{path}: invalid YAML frontmatter: {exc}") from None
    if not isinstance(data, dict):
        raise SkillInvalid(f"{path}: the frontmatter must be a mapping of fields")
    return data, "\n".join(lines[end + 1 :]).strip()


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_in_tree(root: Path | None, path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``path``, never through a link out of ``root`` (the
    unit's worktree, or the project's repository). A command of the unit can replace a
    skill's file in its worktree with a link to any host file (``/etc/shadow``, another
    project's ``.sf/env``): SF, as root, read it and handed it to the model. Links
    inside ``root`` are followed (as the file tools do); the resolved path is then
    opened a directory at a time without a link (``sf_core.beneath``), so one swapped in
    meanwhile fails too. A user skill's folder is the person's own: read as it is."""
    if root is None:
        with path.open("rb") as handle:
            return handle.read(limit)
    top, target = root.resolve(), path.resolve()
    if not target.is_relative_to(top):
        raise OSError(errno.EXDEV, f"a link out of {top}", str(path))
    return read_beneath(top, target, limit)
