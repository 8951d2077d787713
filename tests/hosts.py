"""Worker hosts that share no disk, on one machine, for tests/test_record_hosts.py and
benchmarks/scale.py.

A host is a data directory of its own and real Celery worker processes started in a
mount namespace of their own (``unshare --mount``), where every other host's directory
and the project's registered checkout are empty tmpfs mounts: whatever a worker does
with a project, it does through the repository of record (a bare repository served
by a ``file://`` URL here, ssh or https in a deployment) and its own mirror. The hosts
share PostgreSQL and Redis, as real ones do. The model is ``ScriptedProvider``: each
step answered after a fixed delay, as a real model's answer takes time.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_provider import FakeProvider, Received, Reply, call, openai_calls
from tests.processes import WorkerProcess

TASK_KEY = re.compile(r"^# Task (\S+):", re.MULTILINE)
MODEL = "scripted"


class ScriptedProvider(FakeProvider):
    """Answers every unit from its conversation, each step after ``delay`` seconds:
    write ``<key>.txt``; once a tool has answered, finish. Any worker may ask it
    anything in any order."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.answered = 0

    def next_reply(self, received: Received) -> Reply:
        with self.lock:
            self.answered += 1
        return dataclasses.replace(_answer(received.body), delay=self.delay)


def _answer(body: dict[str, Any]) -> Reply:
    messages = body.get("messages") or []
    brief = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    match = TASK_KEY.search(brief)
    key = match.group(1) if match else "unknown"
    if any(m.get("role") == "tool" for m in messages):
        return openai_calls(call("finish", {"summary": f"wrote {key}.txt"}))
    content = json.dumps(key)[1:-1]
    return openai_calls(call("write_file", {"path": f"{key}.txt", "content": f"{content}\n"}))


def provider_policy(provider: ScriptedProvider, record_url: str, units: int) -> dict[str, Any]:
    """A project policy: every model mode is the scripted provider, free; the repository
    of record at ``record_url``; enough autonomous continuations for ``units``."""
    model = {
        "model": f"openai/{MODEL}",
        "api_base": provider.openai_base,
        "tool_calls": "native",
        "context_window": 32768,
    }
    return {
        "budgets": {"max_autonomous_continues": 10 * units + 100},
        "models": {mode: model for mode in ("fast", "smart", "deep")},
        "prices": {f"openai/{MODEL}": {"input_per_token": "0", "output_per_token": "0"}},
        "record": {"url": record_url},
    }


def task_specs(count: int, prefix: str = "t") -> list[dict[str, Any]]:
    return [
        {
            "key": f"{prefix}{n:03d}",
            "title": f"write {prefix}{n:03d}.txt",
            "acceptance_criteria": ["the file exists"],
            "verify": [f"test -f {prefix}{n:03d}.txt"],
            "risk_level": "low",
        }
        for n in range(count)
    ]


class HostWorker(WorkerProcess):
    """A solo-pool worker of ``host``, blind to the paths in ``hidden``."""

    def __init__(
        self, *, host: str, data: Path, hidden: list[Path], queue: str, env: dict[str, str]
    ) -> None:
        extra = {
            # The scripted provider listens on loopback, which SF refuses unless listed.
            "SF_NET_ALLOW_HOSTS": "127.0.0.1",
            **env,
            "SF_DATA_DIR": str(data),
            "SF_WORKER_HOST": host,
        }
        super().__init__(extra_env=extra, queue=queue)
        self.host = host
        self.hostname = f"{self.name}@{host}"
        self.hidden = hidden

    def command(self) -> list[str]:
        mounts = [
            f"mount -t tmpfs -o size=64k sf-hidden {shlex.quote(str(p))}" for p in self.hidden
        ]
        script = " && ".join([*mounts, 'exec "$@"'])
        namespace = ["unshare", "--mount", "--propagation", "private"]
        return [*namespace, "sh", "-c", script, "sf-host", *super().command()]


@dataclass
class Hosts:
    """Two worker hosts under ``root`` (``host-a``, ``host-b``) on one queue."""

    root: Path
    hidden: list[Path]  # hidden from every host: the registered checkout
    env: dict[str, str]
    queue: str = field(default_factory=lambda: f"q-hosts-{uuid.uuid4().hex[:8]}")
    names: tuple[str, ...] = ("host-a", "host-b")
    workers: list[HostWorker] = field(default_factory=list)

    def data(self, host: str) -> Path:
        path = self.root / host
        path.mkdir(parents=True, exist_ok=True)
        return path

    def start(self, host: str) -> HostWorker:
        others = [self.data(name) for name in self.names if name != host]
        worker = HostWorker(
            host=host,
            data=self.data(host),
            hidden=[*others, *self.hidden],
            queue=self.queue,
            env=self.env,
        )
        self.workers.append(worker)
        worker.start()
        return worker

    def spread(self, count: int) -> list[HostWorker]:
        """``count`` workers, alternating between the hosts."""
        return [self.start(self.names[n % len(self.names)]) for n in range(count)]

    def kill(self, host: str) -> list[HostWorker]:
        """``kill -9`` every worker of ``host``: the host is lost mid-whatever."""
        killed = [w for w in self.workers if w.host == host and w.process is not None]
        for worker in killed:
            assert worker.process is not None
            worker.process.send_signal(signal.SIGKILL)
            worker.process.wait(timeout=30)
        return killed

    def stop_all(self) -> None:
        for worker in self.workers:
            worker.stop(signal.SIGTERM, timeout=30)
        self.workers.clear()


def bare_record(repo: Path, record: Path) -> str:
    """A bare copy of ``repo`` at ``record``: the repository of record; its URL."""
    subprocess.run(["git", "clone", "--bare", "-q", str(repo), str(record)], check=True)
    return f"file://{record}"
