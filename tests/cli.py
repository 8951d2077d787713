"""Running ``manage.py sf`` in-process for tests: exit code, stdout and stderr."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command


def run_sf(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("sf", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()
