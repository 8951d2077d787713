"""The agent's tools: pydantic input schemas and their implementations.

The permission gate has already decided a call before ``ToolBox.run`` executes it;
the tools still refuse paths that leave the worktree, so a gate bug cannot turn
into a write to the host, and ``run_command`` runs in the OS sandbox
(``agents_app.runtime.sandbox``). Outputs are capped; binary files are refused.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import sf_native
from agents_app.gate.judge_paths import eval_hidden
from agents_app.runtime.sandbox import SandboxPolicy, SandboxRefused, sandboxed_run
from agents_app.runtime.search_checks import confirmed_files, confirmed_matches
from agents_app.runtime.tool_specs import type_name
from agents_app.runtime.unredact import MarkerUnresolved, restore_markers
from sf_core.beneath import entries_beneath, read_beneath, walk_root, write_beneath
from sf_core.errors import SfError

MAX_READ_BYTES = 256 * 1024
MAX_OUTPUT_CHARS = 30_000
DEFAULT_COMMAND_TIMEOUT = 120
MAX_COMMAND_TIMEOUT = 1800
# Only these variables reach agent commands: never SF's own secrets or provider keys.
COMMAND_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")


class ToolError(Exception):
    """A tool call that could not be carried out; the message goes back to the model."""


class Finished(Exception):
    """The agent called ``finish``."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


class NeedsPerson(Exception):
    """The agent asked a question nobody has answered yet (``ask_user``)."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadFileInput(_Input):
    """Read a text file of the worktree, optionally a range of its lines."""

    path: str = Field(min_length=1, description="path relative to the worktree root")
    offset: int = Field(default=1, ge=1, description="first line to return (1-based)")
    limit: int = Field(default=2000, ge=1, le=20_000, description="how many lines at most")


class WriteFileInput(_Input):
    """Create or overwrite a file with the given content."""

    path: str = Field(min_length=1)
    content: str


class EditFileInput(_Input):
    """Replace one occurrence of `search` with `replace` (exact, then whitespace-tolerant,
    then fuzzy matching)."""

    path: str = Field(min_length=1)
    search: str = Field(min_length=1)
    replace: str


class GrepInput(_Input):
    """Search file contents with a regular expression (or a fixed string)."""

    pattern: str = Field(min_length=1)
    path: str = Field(default=".", description="directory to search, relative to the worktree")
    include: list[str] = Field(default_factory=list, description="globs of files to search")
    fixed: bool = False
    ignore_case: bool = False
    context: int = Field(default=0, ge=0, le=10)
    max_results: int = Field(default=200, ge=1, le=2000)


class GlobInput(_Input):
    """List files matching a glob such as **/*.py (gitignored files are skipped)."""

    pattern: str = Field(min_length=1)
    path: str = "."


class ListDirInput(_Input):
    """List the entries of a directory."""

    path: str = "."


class RunCommandInput(_Input):
    """Run a shell command in the worktree and return its exit code and output."""

    command: str = Field(min_length=1, max_length=10_000)
    cwd: str | None = Field(default=None, description="directory relative to the worktree")
    timeout_s: int = Field(default=DEFAULT_COMMAND_TIMEOUT, ge=1, le=MAX_COMMAND_TIMEOUT)


class LoadSkillInput(_Input):
    """Load the full instructions of a skill listed in your context (or one of its
    supporting files), or find skills by words with ``search``."""

    name: str = Field(default="", max_length=100, description="the skill's name")
    file: str = Field(
        default="", max_length=300, description="a supporting file the skill lists, optional"
    )
    search: str = Field(
        default="", max_length=200, description="words to find a skill not listed, optional"
    )


class SkillSource(Protocol):
    """The skills of a unit (``skills_app.loader.SkillLoader``)."""

    def load(self, name: str, file: str = "") -> str: ...

    def search(self, text: str) -> str: ...

    def command_ran(self, command: str, exit_code: int | None) -> None:
        """``command`` ran (through the gate, in the sandbox): a skill's script?"""


class AskUserInput(_Input):
    """Ask the person for a decision the task leaves open. Never ask for permission to
    do the task itself (create or change files in the worktree, run its tests): do it."""

    question: str = Field(min_length=1, max_length=4000)


class FinishInput(_Input):
    """Finish the task: summarise what you changed and how it meets the criteria."""

    summary: str = Field(min_length=1, max_length=20_000)


@dataclass
class ToolContext:
    worktree: Path
    skills: SkillSource | None = None
    answers: dict[str, str] = field(default_factory=dict)  # pre-supplied ask_user answers
    # The sandbox policy of the next command, read when it runs (the profile may have
    # changed since the unit started); no network unless it says so.
    sandbox: Callable[[], SandboxPolicy] = SandboxPolicy
    # The unit's resources (SF_PORT, SF_DATABASE_NAME, …) for its commands.
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    name: str
    schema: type[BaseModel]  # the built-in tools' forbid extra fields (``_Input``)
    run: Callable[[ToolContext, Any], str]

    def openai_spec(self) -> dict[str, Any]:
        parameters = copy.deepcopy(_parameters(self.schema))
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": (self.schema.__doc__ or "").strip().replace("\n", " "),
                "parameters": parameters,
            },
        }

    def parse(self, arguments: dict[str, Any]) -> BaseModel:
        return self.schema.model_validate(arguments)


@functools.cache
def _parameters(schema: type[_Input]) -> dict[str, Any]:
    """A tool's JSON schema, generated once: pydantic took ~2 ms a tool, and the loop
    offers every tool at every model step."""
    parameters = schema.model_json_schema()
    parameters.pop("title", None)
    return parameters


def validation_message(tool: str, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or '(input)'}: {error['msg']}"
        for error in exc.errors()
    )
    return f"invalid arguments for {tool}: {problems}"


def call_help(tool: Tool, arguments: Any, exc: ValidationError) -> str:
    """What is wrong with a call's arguments, the tool's parameters, and the same call
    written right (its own values kept, a placeholder for each missing one): a small
    model told only "field required" sends the same call again."""
    given = arguments if isinstance(arguments, dict) else {}
    parameters = _parameters(tool.schema)
    fields = parameters.get("properties", {})
    required = parameters.get("required", [])
    example = {key: value for key, value in given.items() if key in fields}
    for key in required:
        if key not in example:
            example[key] = f"<{key}>"
    signature = ", ".join(
        f"{key}{'' if key in required else '?'}: {type_name(spec)}" for key, spec in fields.items()
    )
    written = json.dumps({"name": tool.name, "arguments": example}, ensure_ascii=False)
    if len(written) > MAX_EXAMPLE_CHARS:
        short = {key: value for key, value in example.items() if len(str(value)) <= 200}
        written = json.dumps({"name": tool.name, "arguments": short}, ensure_ascii=False)
    return (
        f"{validation_message(tool.name, exc)}. {tool.name} takes ({signature}); "
        f"? marks optional. For example:\n{written}"
    )


MAX_EXAMPLE_CHARS = 1500


# --- implementations ------------------------------------------------------------------


def inside(ctx: ToolContext, relative: str) -> Path:
    """Resolve ``relative`` (symlinks too) and refuse anything outside the worktree."""
    root = ctx.worktree.resolve()
    target = (root / relative).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"{relative} is outside the worktree")
    if eval_hidden(str(target)):
        raise ToolError(f"{relative} holds a skill eval case's hidden answers; no tool reads them")
    return target


def read_file(ctx: ToolContext, args: ReadFileInput) -> str:
    path = inside(ctx, args.path)
    if not path.is_file():
        raise ToolError(f"{args.path}: no such file")
    data = _read(ctx, path, args.path, MAX_READ_BYTES + 1)
    if b"\x00" in data[:8192]:
        raise ToolError(f"{args.path} is a binary file")
    text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()[args.offset - 1 : args.offset - 1 + args.limit]
    body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, args.offset))
    return body + ("\n[truncated: file larger than 256 KiB]" if len(data) > MAX_READ_BYTES else "")


def write_file(ctx: ToolContext, args: WriteFileInput) -> str:
    path = inside(ctx, args.path)
    raw = _read(ctx, path, args.path) if path.is_file() else None
    original = raw.decode("utf-8", errors="replace") if raw is not None else None
    content = _unmarked(args.content, original, args.path)
    _write(ctx, path, args.path, content)
    return f"wrote {len(content.encode())} bytes to {args.path}"


def _read(ctx: ToolContext, path: Path, shown: str, limit: int = -1) -> bytes:
    """``path`` as ``inside`` resolved it, no link followed on the way (``sf_core.beneath``)."""
    try:
        return read_beneath(ctx.worktree.resolve(), path, limit)
    except OSError as exc:
        raise ToolError(f"{shown}: {exc.strerror or exc} (a link on the way?)") from None


def _write(ctx: ToolContext, path: Path, shown: str, text: str) -> None:
    try:
        write_beneath(ctx.worktree.resolve(), path, text.encode("utf-8"))
    except OSError as exc:
        raise ToolError(f"{shown}: {exc.strerror or exc} (a link on the way?)") from None


def _unmarked(text: str, original: str | None, path: str) -> str:
    try:
        return restore_markers(text, original, path)
    except MarkerUnresolved as exc:
        raise ToolError(str(exc)) from None


# Small models search for the code they mean to add (seen with Qwen2.5-Coder-1.5B,
# unit after unit: search "def farewell(name)" in a file without it).
EDIT_NO_MATCH_HINT = (
    "`search` must be text already in the file (read_file shows it): to add new code, "
    "search for the line it goes after and replace it with that line plus the new code, "
    "or write the whole file with write_file"
)


def edit_file(ctx: ToolContext, args: EditFileInput) -> str:
    path = inside(ctx, args.path)
    if not path.is_file():
        raise ToolError(f"{args.path}: no such file")
    original = _read(ctx, path, args.path).decode("utf-8")
    search = _unmarked(args.search, original, args.path)
    replace = _unmarked(args.replace, original, args.path)
    try:
        result = sf_native.apply_edit(original, search, replace)
    except sf_native.EditNoMatch as exc:
        closest = _closest_lines(original, str(exc))
        raise ToolError(f"{args.path}: {exc}.{closest} {EDIT_NO_MATCH_HINT}") from None
    except sf_native.EditAmbiguous as exc:
        raise ToolError(f"{args.path}: {exc}") from None
    _write(ctx, path, args.path, result.text)
    return f"edited {args.path} lines {result.start_line}-{result.end_line} ({result.how} match)"


CLOSEST_SHOWN = 12  # lines of the closest match quoted back at most


def _closest_lines(text: str, message: str) -> str:
    """The most similar lines the edit's error names, quoted with their numbers, so the
    model can copy them into its next search text."""
    found = re.search(r"lines (\d+)-(\d+)", message)
    if not found:
        return ""
    first, last = int(found.group(1)), int(found.group(2))
    lines = text.splitlines()[first - 1 : min(last, first - 1 + CLOSEST_SHOWN)]
    if not lines:
        return ""
    quoted = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))
    return f" The closest lines are:\n{quoted}\n"


def _walkable(root: Path) -> None:
    """A path that is not a directory, named as the walkers named it before they
    started from an open directory (recorded traces hold that answer)."""
    if not root.is_dir():
        raise ToolError(f"{root}: not a directory")


def grep(ctx: ToolContext, args: GrepInput) -> str:
    root, top = inside(ctx, args.path), ctx.worktree.resolve()
    _walkable(root)
    case: Literal["insensitive", "sensitive"] = "insensitive" if args.ignore_case else "sensitive"
    try:  # the walk starts in ``root`` as checked, whatever a process swaps meanwhile
        with walk_root(top, root) as opened:
            found = sf_native.grep(
                opened,
                args.pattern,
                fixed=args.fixed,
                case=case,
                context=args.context,
                max_total=args.max_results,
                include=args.include,
            )
    except OSError as exc:
        raise ToolError(f"{args.path}: {exc.strerror or exc} (a link on the way?)") from None
    lines = []
    for m in confirmed_matches(top, root, found):
        if eval_hidden(str(root / m.path)):
            continue  # a skill eval case's hidden answers are never shown
        first = m.line_number - len(m.before)
        lines += [f"{m.path}-{first + i}- {text}" for i, text in enumerate(m.before)]
        lines.append(f"{m.path}:{m.line_number}:{m.column}: {m.text}")
        lines += [f"{m.path}-{m.line_number + 1 + i}- {text}" for i, text in enumerate(m.after)]
    return cap("\n".join(lines) or "no matches")


def glob(ctx: ToolContext, args: GlobInput) -> str:
    root, top = inside(ctx, args.path), ctx.worktree.resolve()
    _walkable(root)
    try:
        with walk_root(top, root) as opened:
            found = sf_native.glob(opened, args.pattern)
    except OSError as exc:
        raise ToolError(f"{args.path}: {exc.strerror or exc} (a link on the way?)") from None
    paths = [p for p in confirmed_files(top, root, found) if not eval_hidden(str(root / p))]
    return cap("\n".join(paths) or "no files match")


def list_dir(ctx: ToolContext, args: ListDirInput) -> str:
    path = inside(ctx, args.path)
    if not path.is_dir():
        raise ToolError(f"{args.path}: not a directory")
    try:
        found = entries_beneath(ctx.worktree.resolve(), path)
    except OSError as exc:
        raise ToolError(f"{args.path}: {exc.strerror or exc} (a link on the way?)") from None
    return "\n".join(sorted(n + ("/" if d else "") for n, d in found if n != ".git")) or "(empty)"


def run_command(ctx: ToolContext, args: RunCommandInput) -> str:
    cwd = inside(ctx, args.cwd or ".")
    env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ}
    env |= {"TERM": "dumb", "GIT_TERMINAL_PROMPT": "0"} | ctx.env
    try:
        done = sandboxed_run(
            args.command,
            worktree=ctx.worktree,
            policy=ctx.sandbox(),
            env=env,
            timeout=args.timeout_s,
            cwd=cwd,
        )
    except SandboxRefused as exc:
        raise ToolError(str(exc)) from None
    if ctx.skills is not None:
        ctx.skills.command_ran(args.command, done.exit_code)
    if done.exit_code is None:
        return cap(f"timed out after {args.timeout_s} s (its processes were killed)\n{done.output}")
    return cap(f"exit code {done.exit_code}\n{done.output}")


def load_skill(ctx: ToolContext, args: LoadSkillInput) -> str:
    if ctx.skills is None:
        raise ToolError("no skills are available in this session")
    try:
        if args.search and not args.name:
            return ctx.skills.search(args.search)
        if not args.name:
            raise ToolError("name the skill to load (or give search words)")
        return ctx.skills.load(args.name, args.file)
    except SfError as exc:  # an unknown, invalid or forbidden skill is the model's mistake
        raise ToolError(str(exc)) from None


def ask_user(ctx: ToolContext, args: AskUserInput) -> str:
    answer = ctx.answers.get(args.question) or ctx.answers.get("*")
    if answer is None:
        raise NeedsPerson(args.question)
    return answer


def finish(ctx: ToolContext, args: FinishInput) -> str:
    raise Finished(args.summary)


def cap(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Keep the head and the tail of long output, where errors usually are."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool("read_file", ReadFileInput, read_file),
        Tool("write_file", WriteFileInput, write_file),
        Tool("edit_file", EditFileInput, edit_file),
        Tool("grep", GrepInput, grep),
        Tool("glob", GlobInput, glob),
        Tool("list_dir", ListDirInput, list_dir),
        Tool("run_command", RunCommandInput, run_command),
        Tool("load_skill", LoadSkillInput, load_skill),
        Tool("ask_user", AskUserInput, ask_user),
        Tool("finish", FinishInput, finish),
    )
}

# A unit of a model with the compact prompt profile (``PromptProfile``): the tools a
# small model uses well. Not glob (list_dir and grep find files), not ask_user (a small
# model asks permission for the task itself); load_skill only where skills are offered.
COMPACT_TOOLS = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "grep",
        "list_dir",
        "run_command",
        "load_skill",
        "finish",
    }
)


# A unit in repair work mode (docs/doctor.md) reads, searches, lists and runs commands
# (through the permission gate and the sandbox, like any unit): it diagnoses and runs
# the commands a repair needs, and never writes or edits files itself. No MCP tools.
REPAIR_TOOLS = frozenset(
    {"read_file", "grep", "glob", "list_dir", "run_command", "load_skill", "ask_user", "finish"}
)
