"""A separate process that claims due tasks until none is left (concurrency test helper).

Usage: python -m tests.claim_worker NAME BARRIER_DIR COUNT   (DATABASE_URL: the test DB)
Each claimer, once Django is loaded, marks itself ready in BARRIER_DIR and waits for
all COUNT of them: however long a busy machine takes to start one, they begin together.
Each claim is followed by a few milliseconds of "work", as a worker's would be, so one
claimer cannot drain the ready set before the others' first query.
Prints the claimed task ids as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

import django

django.setup()

from tasks_app.services import task_claim  # noqa: E402


def main() -> None:
    name, barrier, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    (barrier / name).touch()
    deadline = time.monotonic() + 120
    while len(list(barrier.iterdir())) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    claimed = []
    while (task := task_claim(worker=name)) is not None:
        claimed.append(task.pk)
        time.sleep(0.005)
    print(json.dumps(claimed))


if __name__ == "__main__":
    main()
