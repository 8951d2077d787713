"""A separate process that claims due tasks until none is left (concurrency test helper).

Usage: python -m tests.claim_worker NAME START_AT   (DATABASE_URL points at the test DB)
Prints the claimed task ids as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

import django

django.setup()

from tasks_app.services import task_claim  # noqa: E402


def main() -> None:
    name, start_at = sys.argv[1], float(sys.argv[2])
    time.sleep(max(0.0, start_at - time.time()))  # start together with the others
    claimed = []
    while (task := task_claim(worker=name)) is not None:
        claimed.append(task.pk)
    print(json.dumps(claimed))


if __name__ == "__main__":
    main()
