"""Real SF processes for integration and browser tests: Celery workers and daphne.

A process started here reads the *test* database (pytest-django's ``test_…``), the
test Redis database and, for workers, a queue of its own, so no other worker can
steal its tasks and nothing touches a developer's data.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg
from django.conf import settings
from django.db import connection

ROOT = Path(settings.BASE_DIR)


def child_database_url(application_name: str) -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    return f"postgres://{auth}@{host}/{db['NAME']}?application_name={application_name}"


def maintenance_dsn() -> str:
    """The server of the test database, its ``postgres`` database: to make and drop
    databases."""
    db = connection.settings_dict
    params = {
        "dbname": "postgres",
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
    }
    return " ".join(f"{key}={value}" for key, value in params.items() if value is not None)


def pristine_name(test_database: str) -> str:
    """The copy of the test database made as it was set up, before any process of the
    run connected to it: scripts that need a database of their own copy this one."""
    return f"{test_database}_pristine"


def backends_of(application_name: str) -> int:
    """How many PostgreSQL sessions a child process still holds.

    A plain psycopg connection, not the ORM: browser tests call this while
    Playwright's event loop runs, where Django refuses synchronous ORM calls.
    """
    db = connection.settings_dict
    params = {
        "dbname": db["NAME"],
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v is not None}) as conn:
        row = conn.execute(
            # This run's database only: another checkout's test run may use the same name.
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",
            [application_name],
        ).fetchone()
    return int(row[0]) if row else 0


def wait_for(condition: Callable[[], object], *, timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SfProcess:
    """A child process with the test environment and a log file under .sf/test-logs."""

    def __init__(self, *, extra_env: dict[str, str] | None = None) -> None:
        self.name = f"test-{uuid.uuid4().hex[:8]}"
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[str] | None = None
        self.log_path = ROOT / ".sf" / "test-logs" / f"{self.name}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "DATABASE_URL": child_database_url(self.name),
            "PYTHONUNBUFFERED": "1",
            **self.extra_env,
        }

    def start(self) -> SfProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("w") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
        return self

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int | None:
        """Signal the process, wait for it, then for PostgreSQL to drop its sessions
        (the test database cannot be dropped while any remain)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        wait_for(lambda: backends_of(self.name) == 0, timeout=10, what="its sessions to close")
        return self.process.returncode


class WorkerProcess(SfProcess):
    def __init__(
        self,
        *,
        pool: str = "solo",
        concurrency: int = 1,
        extra_env: dict[str, str] | None = None,
        queue: str | None = None,
        serves: tuple[str, ...] = ("", ".short", ".notify"),
    ) -> None:
        """``queue`` is the checkout's queue the worker sends to; it serves that queue
        and the short-work queues named after it (``sf_core.queues``), or only the
        suffixes in ``serves`` (``(".notify",)``: a notifications worker)."""
        super().__init__(extra_env=extra_env)
        self.hostname = f"{self.name}@sf-test"
        self.queue = queue or f"q-{self.name}"  # workers that share a queue share the work
        self.serves = serves
        self.pool = pool
        self.concurrency = concurrency

    def environment(self) -> dict[str, str]:
        return {
            "SF_WORKER_HEARTBEAT": "1s",
            **super().environment(),
            "SF_CELERY_QUEUE": self.queue,
        }

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "sf_web",
            "worker",
            f"--pool={self.pool}",
            f"--concurrency={self.concurrency}",
            "-Q",
            ",".join(self.queue + suffix for suffix in self.serves),
            "-n",
            self.hostname,
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]


class WebProcess(SfProcess):
    """daphne serving SF (HTTP and websockets) on a free local port."""

    def __init__(self, *, extra_env: dict[str, str] | None = None) -> None:
        super().__init__(extra_env=extra_env)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(self.port),
            "sf_web.asgi:application",
        ]

    def start(self) -> WebProcess:
        super().start()

        def answers() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"daphne exited:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False

        # Generous: on a busy machine importing Django and SF alone took over 30 s.
        try:
            wait_for(answers, timeout=180, what=f"daphne on port {self.port}")
        except BaseException:
            self.stop(signal.SIGKILL)  # not left running (and warned about) by a failed start
            raise
        return self


class WebServerProcess(WebProcess):
    """SF's web server as deployed (``scripts/web.sh``: uvicorn), here one process of it
    (``SF_WEB_PROCESSES=1``) on a free local port."""

    def environment(self) -> dict[str, str]:
        return {
            **super().environment(),
            "SF_HOST": "127.0.0.1",
            "SF_PORT": str(self.port),
            "SF_WEB_PROCESSES": "1",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        }

    def command(self) -> list[str]:
        return ["bash", str(ROOT / "scripts" / "web.sh")]
