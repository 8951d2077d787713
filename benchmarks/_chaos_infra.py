"""What the chaos benchmark starts for itself, and takes down again, even on failure.

Everything a fault may break is the benchmark's own, so that no fault reaches anyone
else on a shared machine: a throw-away PostgreSQL database (only *its* backends are
terminated), a private ``redis-server`` on a free port (the one restarted), a small
tmpfs mounted as the data directory (the worktree folder that is filled up), and the
Celery worker processes started here (the only ones killed). Each is registered with
an ``ExitStack`` the moment it exists, so a crash or Ctrl-C still removes it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import _common  # noqa: F401  (puts the checkout on sys.path)
import psycopg
from _processes import start

from sf_core.queues import queues_served

DRIVER_APP = "sf-chaos-driver"  # the benchmark's own connections: never terminated
WORKER_APP = "sf-chaos-worker"


def log(message: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: object, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")


@contextlib.contextmanager
def signals_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP unwind the stack like Ctrl-C does, so cleanup runs."""

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- PostgreSQL: a database of our own --------------------------------------------------


@dataclass
class BenchDatabase:
    """A fresh database on the checkout's PostgreSQL server, dropped at the end."""

    base_url: str
    name: str = field(default_factory=lambda: f"sf_chaos_{uuid.uuid4().hex[:8]}")

    def url(self, application: str) -> str:
        parts = urlsplit(self.base_url)
        return urlunsplit(
            parts._replace(path=f"/{self.name}", query=f"application_name={application}")
        )

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        parts = urlsplit(self.base_url)
        admin = urlunsplit(parts._replace(path="/postgres", query=f"application_name={DRIVER_APP}"))
        return psycopg.connect(admin, autocommit=True)

    def create(self, *, copy: bool = False) -> None:
        """Empty, for ``migrate`` to build; or (``copy``) a copy of the base URL's
        database, which PostgreSQL makes only while no other session is on it: then
        ``migrate`` has little or nothing to do (the smoke run's minute of migrations)."""
        with self._admin() as conn:
            if not copy:
                conn.execute(f'CREATE DATABASE "{self.name}"')
                return
            template = urlsplit(self.base_url).path.lstrip("/")
            try:
                conn.execute(f'CREATE DATABASE "{self.name}" TEMPLATE "{template}"')
            except psycopg.errors.ObjectInUse as error:
                raise RuntimeError(
                    f"cannot copy the database {template!r}: another session is on it "
                    "(leave out --copy-database to migrate an empty one)"
                ) from error

    def terminate(self) -> int:
        """``pg_terminate_backend`` every session of this database but the driver's."""
        with self._admin() as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND application_name <> %s AND pid <> pg_backend_pid()",
                [self.name, DRIVER_APP],
            ).fetchall()
        return sum(1 for (ok,) in rows if ok)

    def drop(self) -> None:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


# --- Redis: a private server ------------------------------------------------------------


@dataclass
class RedisServer:
    """``redis-server`` on a free port, no persistence: a restart loses every message."""

    workdir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.workdir), "--loglevel", "warning"]
        self.process = start(command, stdout=subprocess.DEVNULL)
        wait_until(self._answers, timeout=20, what=f"redis-server on port {self.port}")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


# --- the data directory: a small tmpfs that can be filled -------------------------------


@dataclass
class Tmpfs:
    """A tmpfs of ``size_mb`` mounted at ``path`` (root only), unmounted at the end."""

    path: Path
    size_mb: int
    mounted: bool = False

    @property
    def ballast(self) -> Path:
        return self.path / ".chaos-ballast"

    def mount(self) -> None:
        if os.geteuid() != 0:
            raise RuntimeError("the disk-full fault mounts a tmpfs: run as root")
        self.path.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "mount",
                "-t",
                "tmpfs",
                "-o",
                f"size={self.size_mb}m,mode=0755",
                "tmpfs",
                str(self.path),
            ],
            check=True,
        )
        self.mounted = True

    def fill(self) -> int:
        """Write a ballast file until the filesystem is full; returns the bytes written.
        Unbuffered writes, halving the size at each ENOSPC down to one block."""
        written = 0
        size = 1 << 20
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while size >= 512:
                try:
                    written += os.write(fd, b"\0" * size)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    size //= 2
        finally:
            os.close(fd)
        return written

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.ballast.unlink()

    def unmount(self) -> None:
        if not self.mounted:
            return
        self.free()
        done = subprocess.run(["umount", str(self.path)], capture_output=True, check=False)
        if done.returncode != 0:  # something still has a file open there: detach it
            subprocess.run(["umount", "-l", str(self.path)], check=False)
        self.mounted = False


# --- Celery workers -----------------------------------------------------------------------


@dataclass
class Worker:
    hostname: str
    process: subprocess.Popen[bytes]


@dataclass
class Workers:
    """Solo-pool Celery worker processes on the benchmark's own queue."""

    root: Path
    queue: str
    env: dict[str, str]
    log_dir: Path
    alive: list[Worker] = field(default_factory=list)
    started: int = 0

    def start_one(self) -> Worker:
        self.started += 1
        hostname = f"{self.queue}-{self.started}@chaos"
        command = [sys.executable, "-m", "celery", "-A", "sf_web", "worker", "--pool=solo"]
        command += ["-Q", queues_served(self.queue), "-n", hostname]
        command += ["--without-gossip", "--without-mingle"]
        command += ["--loglevel=WARNING"]
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with (self.log_dir / f"worker-{self.started}.log").open("wb") as out:
            process = start(
                command, cwd=self.root, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        worker = Worker(hostname, process)
        self.alive.append(worker)
        return worker

    def by_hostname(self, hostname: str) -> Worker | None:
        return next((w for w in self.alive if w.hostname == hostname), None)

    def kill9(self, worker: Worker) -> None:
        """``kill -9`` one of ours, then start its replacement."""
        worker.process.send_signal(signal.SIGKILL)
        worker.process.wait(timeout=10)
        self.alive.remove(worker)
        self.start_one()

    def stop_all(self) -> None:
        for worker in self.alive:
            if worker.process.poll() is None:
                worker.process.terminate()
        for worker in self.alive:
            try:
                worker.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait(timeout=10)
        self.alive.clear()
