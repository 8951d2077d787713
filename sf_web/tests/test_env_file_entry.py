"""Entry points read the checkout's ``.sf/env``: ``manage.py`` in a real subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(settings.BASE_DIR)
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}{port}/{db['NAME']}"


def test_manage_py_reads_the_checkouts_env_file(tmp_path: Path) -> None:
    # Given a checkout (manage.py beside .sf/env) and a shell with nothing SF set
    checkout = tmp_path / "checkout"
    (checkout / ".sf").mkdir(parents=True)
    shutil.copy(ROOT / "manage.py", checkout / "manage.py")
    data = tmp_path / "data"
    (checkout / ".sf" / "env").write_text(
        f"# as scripts/setup.sh writes it\nDATABASE_URL={_database_url()}\n"
        f"REDIS_URL={settings.REDIS_URL}\nSF_DATA_DIR='{data}'\n"
    )
    shell = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SF_", "DATABASE_URL", "REDIS_URL", "DJANGO_"))
    }
    # When the README's CLI example runs there
    result = subprocess.run(
        [sys.executable, "manage.py", "sf", "status"],
        cwd=checkout,
        env={**shell, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # Then it talks to the PostgreSQL database named in the file, not an empty SQLite
    assert "Traceback" not in result.stderr, result.stderr
    assert "ok  database  PostgreSQL" in result.stdout, result.stdout + result.stderr
    assert connection.settings_dict["NAME"] in result.stdout
    assert "(team mode)" in result.stdout
    assert not (data / "sf.sqlite3").exists()


def test_a_bad_env_file_line_stops_manage_py_with_the_line(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".sf").mkdir(parents=True)
    shutil.copy(ROOT / "manage.py", checkout / "manage.py")
    (checkout / ".sf" / "env").write_text("DATABASE_URL=postgres://h/x\noops\n")
    shell = {k: v for k, v in os.environ.items() if not k.startswith("SF_")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=checkout,
        env={**shell, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert result.stderr.startswith(f"manage.py: {checkout / '.sf' / 'env'}, line 2: expected")
    assert "Traceback" not in result.stderr
