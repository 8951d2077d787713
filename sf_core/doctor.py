"""The doctor's registry: health checks with stable ids, their report, their fixes.

Each app registers the checks of what it owns in its ``AppConfig.ready`` (the kernel
imports no app): ``register(Check(id=..., run=..., fix=...))``. A check returns the
findings it sees — none means healthy — and never raises: a check that fails to run is
itself an error finding (``check.crashed``), so one broken probe cannot hide the rest.

A fix is deterministic and idempotent: it acts only on what the check sees *now*
(so a second run finds nothing and changes nothing) and returns what it did as
``RepairDone`` values; the caller records each as an audit row (``doctor_fix``'s
``record``) — the fix itself writes its transitions (a task's, a session's) where the
thing it moves has a state machine.

``cheap`` checks read a few rows or a probe and nothing on disk: the engine's
pre-dispatch gate runs only those, and caches the report for ``GATE_CACHE_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.db import connection, transaction
from pydantic import BaseModel, Field

from sf_core.actors import Actor

logger = logging.getLogger("sf.doctor")
GATE_CACHE_SECONDS = 5.0


class Severity(StrEnum):
    OK = "ok"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


_RANK = {Severity.OK: 0, Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


class Finding(BaseModel):
    """One thing a check saw: what is wrong, the evidence, whether a fix exists."""

    severity: Severity
    message: str
    evidence: list[str] = Field(default_factory=list)
    fixable: bool = False
    target: str = ""  # what a fix would act on (a path, a row), for the audit row
    # The project it is about (its id), None for SF's own state (workers, disk, the
    # database): who may see the finding, and who may fix it (agents_app.doctor_access).
    project_id: int | None = None


class CheckReport(BaseModel):
    id: str
    title: str
    severity: Severity
    fixable: bool
    findings: list[Finding]
    milliseconds: float


class DoctorReport(BaseModel):
    """What ``sf doctor --output-format json`` prints (docs/doctor.md)."""

    healthy: bool  # no check at error severity
    severity: Severity  # the worst of all checks
    checks: list[CheckReport]
    milliseconds: float

    def failing(self, at_least: Severity = Severity.ERROR) -> list[CheckReport]:
        return [c for c in self.checks if _RANK[c.severity] >= _RANK[at_least]]

    def brief(self) -> str:
        """The report as lines for people and for a repair unit's brief."""
        lines: list[str] = []
        for check in self.failing(Severity.INFO):
            for finding in check.findings:
                fix = " [fixable]" if finding.fixable else ""
                lines.append(f"{finding.severity.upper()} {check.id}: {finding.message}{fix}")
                lines.extend(f"    {item}" for item in finding.evidence)
        return "\n".join(lines) or "all checks passed"


class RepairDone(BaseModel):
    """One repair a fix applied (recorded as an audit row by the caller)."""

    check_id: str = ""
    target: str
    action: str


class DoctorOutput(BaseModel):
    """``sf doctor --output-format json``: the report after the fixes (``--fix``) and
    the repairs applied (empty without ``--fix``)."""

    report: DoctorReport
    repairs: list[RepairDone] = Field(default_factory=list)


CheckRun = Callable[[], list[Finding]]
CheckFix = Callable[[Actor], list[RepairDone]]


@dataclass(frozen=True)
class Check:
    id: str  # stable: scripts and the docs name it
    title: str
    run: CheckRun
    fix: CheckFix | None = None
    cheap: bool = False  # run by the pre-dispatch gate


_registry: dict[str, Check] = {}
_lock = threading.Lock()


def register(*checks: Check) -> None:
    """Add checks; registering the same id again replaces it (a reloaded app)."""
    with _lock:
        for check in checks:
            _registry[check.id] = check


def registered(*, cheap_only: bool = False, ids: Iterable[str] | None = None) -> list[Check]:
    wanted = set(ids) if ids is not None else None
    with _lock:
        found = sorted(_registry.values(), key=lambda c: c.id)
    return [c for c in found if (not cheap_only or c.cheap) and (wanted is None or c.id in wanted)]


def unknown_ids(ids: Iterable[str]) -> list[str]:
    with _lock:
        return sorted(set(ids) - set(_registry))


def doctor_run(*, cheap_only: bool = False, ids: Iterable[str] | None = None) -> DoctorReport:
    """Run the registered checks (all, or the cheap ones) and report."""
    started = time.perf_counter()
    checks = [_run_one(check) for check in registered(cheap_only=cheap_only, ids=ids)]
    worst = max((c.severity for c in checks), key=_RANK.__getitem__, default=Severity.OK)
    return DoctorReport(
        healthy=_RANK[worst] < _RANK[Severity.ERROR],
        severity=worst,
        checks=checks,
        milliseconds=_since(started),
    )


def _run_one(check: Check) -> CheckReport:
    started = time.perf_counter()
    try:
        findings = _run_guarded(check)
    except Exception as exc:  # a broken probe is a finding, never a crash of the doctor
        logger.warning("doctor check %s could not run: %s", check.id, exc)
        logger.debug("doctor check %s", check.id, exc_info=True)
        findings = [
            Finding(
                severity=Severity.ERROR,
                message=f"the check could not run: {type(exc).__name__}: {exc}",
            )
        ]
    worst = max((f.severity for f in findings), key=_RANK.__getitem__, default=Severity.OK)
    return CheckReport(
        id=check.id,
        title=check.title,
        severity=worst,
        fixable=any(f.fixable for f in findings),
        findings=findings,
        milliseconds=_since(started),
    )


def _run_guarded(check: Check) -> list[Finding]:
    """Inside a transaction, in a savepoint: a failed query must not poison the
    caller's transaction (and so every check after it) on PostgreSQL. Outside one
    (autocommit: the CLI, the page, dispatch) no savepoint is needed, and none is paid
    for: a BEGIN and a COMMIT per check were most of the gate's statements."""
    if not connection.in_atomic_block:
        return check.run()
    with transaction.atomic():
        return check.run()


Recorder = Callable[[RepairDone, Actor], Any]


def doctor_fix(
    *, actor: Actor, record: Recorder, ids: Iterable[str] | None = None
) -> list[RepairDone]:
    """Apply the deterministic fix of every check that has one and sees something to
    fix; ``record`` writes each repair's audit row. Idempotent: run again at once, it
    finds nothing to do and returns []."""
    done: list[RepairDone] = []
    for check in registered(ids=ids):
        if check.fix is None or not _run_one(check).fixable:
            continue
        try:
            repairs = check.fix(actor)
        except Exception:  # one failing fix must not stop the others
            logger.warning("doctor fix %s failed", check.id, exc_info=True)
            continue
        for repair in repairs:
            repair = repair.model_copy(update={"check_id": check.id})
            record(repair, actor)
            done.append(repair)
    return done


# --- the pre-dispatch gate's cache ------------------------------------------------------


@dataclass
class _Cached:
    report: DoctorReport | None = None
    at: float = 0.0


_gate = _Cached()


def gate_report(*, max_age: float = GATE_CACHE_SECONDS) -> DoctorReport:
    """The cheap checks' report, at most ``max_age`` seconds old (per process): the
    engine asks before every dispatch, and the checks need not run that often."""
    now = time.monotonic()
    cached = _gate.report
    if cached is not None and now - _gate.at < max_age:
        return cached
    report = doctor_run(cheap_only=True)
    _gate.report, _gate.at = report, time.monotonic()
    return report


def gate_forget() -> None:
    """Drop the cached gate report (after a fix, and in tests)."""
    _gate.report, _gate.at = None, 0.0


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
