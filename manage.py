#!/usr/bin/env python
"""Django's command-line utility for SF."""

import os
import sys
from pathlib import Path


def main() -> None:
    from django.core.exceptions import ImproperlyConfigured

    from sf_core.env import env_file_load_checkout

    # The checkout's .sf/env (written by scripts/setup.sh) before Django reads settings;
    # without it the README's CLI examples would find an empty SQLite file instead.
    try:
        env_file_load_checkout(Path(__file__).resolve().parent)
    except ImproperlyConfigured as exc:
        sys.exit(f"manage.py: {exc}")  # one line naming file and line, not a traceback
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
