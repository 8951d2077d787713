"""Verdicts: what the gate concludes about one part of a call, and why.

A call gets one verdict per part (each command of a compound command, each path); the
most severe decides (deny > ask > allow), and among equal ones the riskier. The profile
table (``Profile.floor``), the safety harness (``harness``: a person confirms, under
every profile) and the built-in denies (``builtin``: never allowed) make them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents_app.axes import PROFILE_ORDER, profile_rank

R, N, T, U = PROFILE_ORDER  # restricted, normal, trusted, unrestricted

# Risk classes from the mildest; among verdicts of equal severity the riskier one decides.
RISK_ORDER = tuple(
    str.split(
        "none skill read mcp-read read-outside eval-hidden write-worktree mcp-write git-local "
        "exec-network exec-build install exec-code git-remote mcp-external write-outside "
        "unknown mcp-unclassed exec-host opaque mcp-destructive exec-destructive"
    )
)
_RISK_RANK = {risk: rank for rank, risk in enumerate(RISK_ORDER)}
_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}

_HARNESS = {
    "recursive-delete": "deletes a tree outside the worktree, or the worktree or its .git",
    "chmod-world-writable": "makes a whole tree writable by everyone",
    "git-push-force": "can overwrite history on the remote",
    "git-push-delete": "deletes a branch or tag on the remote",
    "git-reset-hard": "throws away uncommitted work",
    "git-clean": "deletes untracked files for good",
    "git-branch-delete": "deletes or force-moves a branch",
    "git-checkout-force": "throws away local changes",
    "git-stash-drop": "throws away stashed work",
    "git-reflog-expire": "removes the history that undo relies on",
    "git-tag-delete": "deletes a tag",
    "git-discard-changes": "throws away every uncommitted change",
    "write-system": "writes to the operating system's files",
    "write-startup": "writes to shell start-up, credential or key files",
    "disk": "formats or repartitions a disk",
    "database-drop": "drops or empties database data",
    "infra-destroy": "destroys infrastructure or containers",
    "power": "shuts down or restarts the machine",
    "kill-all": "kills every process it can",
    "crontab-remove": "removes every scheduled job",
    "shred": "overwrites files beyond recovery",
    "pipe-to-shell": "runs code fetched from the network",
    "download-then-run": "saves a download, then runs a program in the same command line",
}
_BUILTIN = {
    "recursive-root": "works recursively on /, the home directory or a top-level directory",
    "block-device": "writes to a disk device",
    "fork-bomb": "defines a function that calls itself (a fork bomb)",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Literal["allow", "ask", "deny"]
    rule: str
    risk: str
    reason: str
    lift: str = ""  # "rule": allow and approved rules may lift it; "approved": only approvals
    subject: str = ""  # what a lifting rule is matched against
    family: str = ""  # the declared command family (`pytest`) whose approval lifts it

    def of_family(self, family: str) -> Verdict:
        """This verdict, liftable by an approval of ``family`` (no dataclasses.replace:
        it runs for every part of every command and is several times slower)."""
        return Verdict(
            self.decision, self.rule, self.risk, self.reason, self.lift, self.subject, family
        )


class BadInput(ValueError):
    """The tool input is not what the tool takes: the call is denied."""


@dataclass(frozen=True, slots=True)
class Profile:
    """The session's permission profile, applied to the profile table."""

    name: str

    def floor(self, floor: str, name: str, risk: str, what: str, subject: str) -> Verdict:
        """Allowed from ``floor`` up; below it ask, or deny under restricted."""
        rule = f"profile.{self.name}.{name}"
        if profile_rank(self.name) >= profile_rank(floor):
            return Verdict("allow", rule, risk, f"{what}; the {self.name} profile allows it.")
        if self.name == R:
            reason = f"{what}; the restricted profile does not allow it."
            return Verdict("deny", rule, risk, reason, "rule", subject)
        reason = f"{what}; the {self.name} profile asks first ({floor} allows it)."
        return Verdict("ask", rule, risk, reason, "rule", subject)


def harness(name: str, subject: str) -> Verdict:
    """An irreversible operation: a person confirms it under every profile."""
    reason = f"`{short(subject)}` {_HARNESS[name]}; a person confirms it under every profile."
    return Verdict(
        "ask", f"harness.destructive.{name}", "exec-destructive", reason, "approved", subject
    )


def builtin(name: str, subject: str) -> Verdict:
    """A built-in deny: no profile and no rule allows it."""
    reason = f"`{short(subject)}` {_BUILTIN[name]}; this is never allowed."
    return Verdict("deny", f"builtin.{name}", "exec-destructive", reason)


def worst(verdicts: list[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: (_SEVERITY[v.decision], _RISK_RANK[v.risk]))


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
