from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.processes import WorkerProcess


@pytest.fixture
def worker_process() -> Iterator[WorkerProcess]:
    """A real Celery worker (solo pool) on its own queue against the test database."""
    worker = WorkerProcess()
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()
