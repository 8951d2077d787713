"""The doctor's checks of the agents, skills and installation layers, each against a
real broken state (the engine's are in tasks_app/tests/test_doctor_checks.py), and the
registry's promises: a crashing check is a finding, fixes are idempotent, the gate's
report is cached."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from agents_app.models import AgentSession, ModeTransition, RepairRecord
from agents_app.services import session_change_mode, session_finish
from agents_app.services.repairs import doctor_repair
from sf_core import doctor, native_source
from sf_core.actors import Actor
from sf_core.doctor import Check, CheckReport, Finding, RepairDone, Severity, doctor_run
from sf_web import doctor_checks as install_checks
from skills_app.sync import project_skills_sync

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("test-doctor")


def check(check_id: str) -> CheckReport:
    (report,) = doctor_run(ids=[check_id]).checks
    return report


def test_steering_pending_on_a_finished_session_is_cancelled(
    agent_session: AgentSession,
) -> None:
    pending = session_change_mode(
        session=agent_session,
        changes={"work_mode": "build"},
        reason="later",
        actor=ACTOR,
        scope="after-current-unit",
    )
    assert check("transitions.unappliable").severity == Severity.OK, "the session may still run"
    session_finish(session=agent_session, status="completed", reason="done", actor=ACTOR)

    assert check("transitions.unappliable").findings[0].target == f"transition {pending.pk}"
    assert [r.action for r in doctor_repair(actor=ACTOR)] == ["cancelled"]
    assert doctor_repair(actor=ACTOR) == []
    pending.refresh_from_db()
    assert pending.status == "cancelled"
    assert "cancelled by the doctor: the session is completed" in pending.reason
    assert RepairRecord.objects.get().target == f"transition {pending.pk}"


def test_a_moved_repository_and_a_dirty_base_branch_are_reported(project: Any) -> None:
    repo = Path(project.repo_path)
    (repo / "README.md").write_text("changed by a person\n")

    (finding,) = check("projects.repository").findings
    assert finding.severity == Severity.WARNING
    assert "uncommitted changes" in finding.message
    assert " M README.md" in finding.evidence

    shutil.move(repo, repo.with_name("moved"))
    (finding,) = check("projects.repository").findings
    assert finding.severity == Severity.ERROR
    assert finding.message == "project sample: the repository is gone (moved or deleted)"


def test_a_configured_model_without_a_price_is_reported(settings: Any) -> None:
    settings.SF_MODEL_SMART = "selfhosted/doctor-test-model"
    (finding,) = check("models.unpriced").findings
    assert (
        finding.message
        == "model selfhosted/doctor-test-model has no price: its calls are charged $0"
    )


def test_a_skill_that_fails_validation_is_reported(project: Any) -> None:
    folder = Path(project.repo_path, ".agents", "skills", "bad")
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: [bad\n---\n")
    project_skills_sync(project)

    (finding,) = check("skills.invalid").findings
    assert finding.message.startswith("skill bad (project sample) fails validation:")
    assert "invalid YAML frontmatter" in finding.message


def test_an_unapplied_migration_is_reported() -> None:
    # Below a later migration that is applied: a plan to the leaves would not list it.
    MigrationRecorder(connection).record_unapplied("tasks_app", "0015_worker_live_counts")
    (finding,) = check("migrations").findings
    assert finding.severity == Severity.ERROR
    assert finding.message.startswith("1 migration not applied")
    assert finding.evidence == ["tasks_app.0015_worker_live_counts"]


def test_an_unapplied_latest_migration_is_reported() -> None:
    recorder = MigrationRecorder(connection)
    latest = max(name for app, name in recorder.applied_migrations() if app == "tasks_app")
    recorder.record_unapplied("tasks_app", latest)
    (finding,) = check("migrations").findings
    assert finding.evidence == [f"tasks_app.{latest}"]


def test_disk_space_under_the_thresholds(settings: Any) -> None:
    settings.SF_DOCTOR_DISK_WARNING_MIB = 10**9
    assert check("disk.space").severity == Severity.WARNING
    settings.SF_DOCTOR_DISK_ERROR_MIB = 10**9
    report = doctor_run(cheap_only=True)
    assert not report.healthy
    assert [c.id for c in report.failing()] == ["disk.space"]


def test_the_native_module_against_its_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sf_native

    source = tmp_path / "native"
    (source / "src").mkdir(parents=True)
    (source / "Cargo.toml").write_text(f'[package]\nversion = "{sf_native.__version__}"\n')
    monkeypatch.setattr(install_checks, "NATIVE_SOURCE", source)
    monkeypatch.setattr(install_checks, "NATIVE_MANIFEST", tmp_path / "absent.json")
    (source / "src" / "lib.rs").write_text("// edited after the build\n")
    assert check("native.version").findings[0].evidence[-1] == "src/lib.rs"

    (source / "Cargo.toml").write_text('[package]\nversion = "9.9.9"\n')
    (finding,) = check("native.version").findings
    assert finding.severity == Severity.ERROR
    assert finding.message.endswith("the source is 9.9.9")


def test_a_fresh_clone_of_the_built_sources_is_not_a_change(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A module from the cache and a clone made after it: every file is newer than the
    build, none differs from what it was built from (CI's clean clone, stop 25)."""
    import sf_native

    source = tmp_path / "native"
    (source / "src").mkdir(parents=True)
    (source / "Cargo.toml").write_text(f'[package]\nversion = "{sf_native.__version__}"\n')
    (source / "src" / "lib.rs").write_text("// as built\n")
    manifest = tmp_path / native_source.MANIFEST_NAME
    assert native_source.main(["native_source.py", str(source), str(manifest)]) == 0
    monkeypatch.setattr(install_checks, "NATIVE_SOURCE", source)
    monkeypatch.setattr(install_checks, "NATIVE_MANIFEST", manifest)
    later = time.time() + 3600
    for path in (source / "Cargo.toml", source / "src" / "lib.rs"):
        os.utime(path, (later, later))
    assert check("native.version").findings == []

    (source / "src" / "lib.rs").write_text("// edited after the build\n")
    (source / "src" / "new.rs").write_text("// added\n")
    (finding,) = check("native.version").findings
    assert finding.severity == Severity.WARNING
    assert finding.evidence[-2:] == ["src/lib.rs", "src/new.rs"]


@pytest.fixture
def scratch_checks() -> Any:
    """Checks registered for one test only."""
    before = dict(doctor._registry)
    yield
    doctor._registry.clear()
    doctor._registry.update(before)
    doctor.gate_forget()


def test_a_crashing_check_is_an_error_finding_and_the_others_still_run(
    scratch_checks: Any,
) -> None:
    def boom() -> list[Finding]:
        raise RuntimeError("probe broke")

    doctor.register(Check(id="zz.boom", title="boom", run=boom))
    report = doctor_run()
    boom_report = next(c for c in report.checks if c.id == "zz.boom")
    assert boom_report.findings[0].message == "the check could not run: RuntimeError: probe broke"
    assert not report.healthy
    assert check("database").severity == Severity.OK


def test_the_gate_report_is_cached_and_forgotten_after_a_fix(scratch_checks: Any) -> None:
    calls: list[float] = []

    def counted() -> list[Finding]:
        calls.append(time.monotonic())
        return []

    doctor.register(Check(id="zz.counted", title="counted", run=counted, cheap=True))
    doctor.gate_forget()
    doctor.gate_report(max_age=60)
    doctor.gate_report(max_age=60)
    assert len(calls) == 1
    doctor_repair(actor=ACTOR)  # forgets the cached report
    doctor.gate_report(max_age=60)
    assert len(calls) >= 2


def test_a_fix_that_raises_does_not_stop_the_others(scratch_checks: Any) -> None:
    def broken_fix(actor: Actor) -> list[RepairDone]:
        raise RuntimeError("fix broke")

    def good_fix(actor: Actor) -> list[RepairDone]:
        return [RepairDone(target="t", action="a")]

    def fixable() -> list[Finding]:
        return [Finding(severity=Severity.WARNING, message="m", fixable=True)]

    doctor.register(
        Check(id="zz.a", title="a", run=fixable, fix=broken_fix),
        Check(id="zz.b", title="b", run=fixable, fix=good_fix),
    )
    done = doctor_repair(actor=ACTOR, ids=["zz.a", "zz.b"])
    assert [(r.check_id, r.target) for r in done] == [("zz.b", "t")]
    assert ModeTransition.objects.count() == 0


def test_an_unreachable_broker_is_an_error(settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    (finding,) = check("broker").findings
    assert (finding.severity, finding.message) == (Severity.ERROR, "redis unreachable")


def test_a_failed_query_does_not_poison_the_checks_after_it(scratch_checks: Any) -> None:
    def bad_sql() -> list[Finding]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
        return []

    doctor.register(Check(id="aa.bad-sql", title="bad sql", run=bad_sql))
    report = doctor_run(ids=["aa.bad-sql", "transitions.unappliable", "workers.clock"])
    assert [(c.id, c.severity) for c in report.checks] == [
        ("aa.bad-sql", Severity.ERROR),
        ("transitions.unappliable", Severity.OK),
        ("workers.clock", Severity.OK),
    ]
