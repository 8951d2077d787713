"""The doctor's checks of the installation: database, broker, pending migrations, the
native module against its source, disk space under the data directory.

Registered in ``SfWebConfig.ready`` (the project knows every app; the probes are the
status page's, ``dashboard_app.status``). docs/doctor.md lists every check id.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from dashboard_app.status import broker_probe, database_probe
from sf_core import native_source
from sf_core.doctor import Check, Finding, Severity, register

NATIVE_SOURCE = Path(settings.BASE_DIR) / "native"
# Written by scripts/setup.sh into the virtualenv it installed the module into.
NATIVE_MANIFEST = Path(sys.prefix) / native_source.MANIFEST_NAME
_CARGO_VERSION = re.compile(r'^version\s*=\s*"([^"]+)"', re.MULTILINE)
MIB = 1024 * 1024


def database_check() -> list[Finding]:
    probe = database_probe()
    if probe.ok:
        return []
    return [Finding(severity=Severity.ERROR, message=probe.summary, evidence=[probe.detail])]


def broker_check() -> list[Finding]:
    probe = broker_probe()
    if probe.ok:
        return []
    return [Finding(severity=Severity.ERROR, message=probe.summary, evidence=[probe.detail])]


def migrations_check() -> list[Finding]:
    # Every migration on disk that the database has not recorded — not only the plan
    # to the leaves, which skips one left unapplied below an applied later one.
    loader = MigrationExecutor(connection).loader
    applied = set(loader.applied_migrations)
    missing = sorted(key for key in loader.graph.nodes if key not in applied)
    if not missing:
        return []
    names = [f"{app}.{name}" for app, name in missing]
    return [
        Finding(
            severity=Severity.ERROR,
            message=f"{len(names)} migration{'s' if len(names) != 1 else ''} not applied: "
            "run `python manage.py migrate`",
            evidence=names[:20],
        )
    ]


def native_check() -> list[Finding]:
    """The installed ``sf_native`` against ``native/``: a missing module or another
    version is an error (units need its tools); sources edited after the build are a
    warning (rebuild with scripts/setup.sh)."""
    try:
        import sf_native
        from sf_native import _core
    except ImportError as exc:
        return [
            Finding(
                severity=Severity.ERROR, message="sf_native is not installed", evidence=[str(exc)]
            )
        ]
    cargo = NATIVE_SOURCE / "Cargo.toml"
    if not cargo.is_file():
        return []  # an installed copy without its source tree: nothing to compare
    found = _CARGO_VERSION.search(cargo.read_text())
    source_version = found.group(1) if found else "?"
    built = Path(_core.__file__ or "")
    evidence = [f"installed {sf_native.__version__} at {built}", f"source {source_version}"]
    if sf_native.__version__ != source_version:
        message = f"sf_native {sf_native.__version__} is installed, the source is {source_version}"
        return [Finding(severity=Severity.ERROR, message=message, evidence=evidence)]
    edited = _sources_changed_since_build(built)
    if edited:
        return [
            Finding(
                severity=Severity.WARNING,
                message=f"{len(edited)} native source files changed after sf_native was built",
                evidence=evidence + edited[:10],
            )
        ]
    return []


def _sources_changed_since_build(built: Path) -> list[str]:
    """By content against the manifest setup.sh wrote beside the build; without one (a
    module installed another way), by modification time against the module's file."""
    try:
        recorded = json.loads(NATIVE_MANIFEST.read_text())
    except (OSError, ValueError):
        return _sources_newer_than(built)
    return native_source.changed(recorded, native_source.manifest(NATIVE_SOURCE))


def _sources_newer_than(built: Path) -> list[str]:
    try:
        built_at = built.stat().st_mtime
    except OSError:
        return []
    sources = [NATIVE_SOURCE / "Cargo.toml", *sorted((NATIVE_SOURCE / "src").rglob("*.rs"))]
    return [
        str(path.relative_to(NATIVE_SOURCE))
        for path in sources
        if path.is_file() and path.stat().st_mtime > built_at
    ]


def disk_check() -> list[Finding]:
    """Free space where worktrees, traces and the embedded database live."""
    data_dir = Path(settings.SF_DATA_DIR)
    probe = data_dir if data_dir.exists() else data_dir.parent
    usage = shutil.disk_usage(probe)
    free_mib = usage.free // MIB
    evidence = [f"{free_mib} MiB free of {usage.total // MIB} MiB under {data_dir}"]
    if free_mib < settings.SF_DOCTOR_DISK_ERROR_MIB:
        severity = Severity.ERROR
    elif free_mib < settings.SF_DOCTOR_DISK_WARNING_MIB:
        severity = Severity.WARNING
    else:
        return []
    return [Finding(severity=severity, message=f"only {free_mib} MiB free", evidence=evidence)]


def register_checks() -> None:
    register(
        Check(id="database", title="Database", run=database_check, cheap=True),
        # Not in the dispatch gate: dispatch already survives a broker that is down
        # (the send is marked unsent and the sweep sends it again).
        Check(id="broker", title="Broker", run=broker_check),
        Check(id="migrations", title="Pending migrations", run=migrations_check),
        Check(id="native.version", title="Native module", run=native_check, cheap=True),
        Check(
            id="disk.space", title="Disk space under the data directory", run=disk_check, cheap=True
        ),
    )
