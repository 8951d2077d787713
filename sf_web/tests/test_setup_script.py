"""scripts/checkout.sh: the names that keep two checkouts on one host apart."""

from __future__ import annotations

import subprocess
from pathlib import Path

from django.conf import settings

CHECKOUT_SH = Path(settings.BASE_DIR) / "scripts" / "checkout.sh"


def bash(script: str, cwd: Path | None = None) -> str:
    result = subprocess.run(
        ["bash", "-c", f". {CHECKOUT_SH}\n{script}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin"},
    )
    return result.stdout.strip()


def test_two_checkouts_get_their_own_database_queue_and_prefix() -> None:
    one = bash("checkout_names /home/ann/sf").split()
    two = bash("checkout_names /home/ann/sf-review").split()
    again = bash("checkout_names /home/ann/sf").split()
    assert one == again, "the names must be stable for one path"
    assert one != two
    database, queue, prefix = one
    assert database.startswith("sf_")
    assert len(database) == len("sf_") + 8
    assert queue == prefix == "sf-" + database[3:]


def test_an_earlier_env_file_is_kept_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / "env").write_text(
        "# Written by scripts/setup.sh\nDATABASE_URL=postgres://h/sf\nSF_CELERY_QUEUE=q-file\n"
    )
    out = bash(
        "SF_CELERY_QUEUE=q-shell; env_file_keep env DATABASE_URL SF_CELERY_QUEUE REDIS_URL\n"
        'echo "$DATABASE_URL|$SF_CELERY_QUEUE|${REDIS_URL:-unset}"',
        cwd=tmp_path,
    )
    assert out == "postgres://h/sf|q-shell|unset"
