"""How ``harness_compare.py`` installs and starts each harness on one task.

The peers are installed at pinned versions, each in its own virtualenv under
``~/.cache/sf/peers`` (made once, then reused), never in SF's environment. Every
harness gets the same model (through its own counting proxy), the same ``PATH`` (SF's
virtualenv first, so ``python`` has pytest for everyone), the same wall-clock cap and
one attempt; its output goes to a log beside the repository.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from _processes import start

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(os.environ.get("SF_PEERS_DIR") or Path.home() / ".cache" / "sf" / "peers")
PEERS = {"mini": "mini-swe-agent==2.4.6", "aider": "aider-chat==0.86.2"}
KILL_GRACE = 15  # seconds between SIGTERM at the cap and SIGKILL, the same for all
# Unattended SF: questions decided alone, every approval rejected (as live_model.py).
UNATTENDED = """\
ask_user:
  "*": "Nobody is here to answer: decide yourself and go on."
approvals:
  - tool: "*"
    decision: reject
"""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path


@dataclass
class Ended:
    code: int | None  # None: killed at the cap
    wall: float
    timed_out: bool


def peer_venv(harness: str) -> Path:
    return PEERS_DIR / PEERS[harness].replace("==", "-")


def install_peer(harness: str) -> Path:
    """The peer's virtualenv with its pinned package, made if missing; its bin folder."""
    venv, spec = peer_venv(harness), PEERS[harness]
    marker = venv / ".installed"
    if marker.is_file() and marker.read_text().strip() == spec:
        return venv / "bin"
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    done = subprocess.run([*pip, "--disable-pip-version-check", spec], check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{spec}: pip install failed with exit {done.returncode}")
    marker.write_text(spec + "\n")
    return venv / "bin"


def base_env(run_dir: Path) -> dict[str, str]:
    """What every harness sees: a clean home per run, SF's Python first on PATH."""
    home = run_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    path = f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no price fetch from the network
        "OPENAI_API_KEY": "local",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def aider_launch(
    repo: Path, intent: str, model: str, api_base: str, run_dir: Path, cap: float
) -> Launch:
    """aider with the ``whole`` edit format (the file back in one fenced block), which
    its docs give for models that struggle with search/replace; aider's default for a
    model it does not know, said explicitly."""
    argv = [
        str(install_peer("aider") / "aider"),
        *("--model", f"openai/{model}", "--openai-api-base", api_base),
        *("--edit-format", "whole", "--message", intent, "--yes-always"),
        *("--no-check-update", "--analytics-disable", "--no-show-model-warnings"),
        *("--no-pretty", "--no-fancy-input", "--no-gitignore", "--no-show-release-notes"),
        *("--chat-history-file", str(run_dir / "aider.chat.md")),
        *("--input-history-file", str(run_dir / "aider.input")),
        *("--llm-history-file", str(run_dir / "aider.llm.txt")),
    ]
    return Launch(argv, base_env(run_dir), repo)


def mini_launch(
    repo: Path, intent: str, model: str, api_base: str, run_dir: Path, cap: float
) -> Launch:
    """mini-swe-agent with its text-based litellm model class (the model writes one bash
    command in a fenced block a turn; no tool-calling API), run to the end unattended."""
    config = run_dir / "mini.yaml"
    config.write_text(
        "model:\n"
        "  model_class: litellm_textbased\n"
        f"  model_name: openai/{model}\n"
        "  cost_tracking: ignore_errors\n"
        "  model_kwargs:\n"
        f"    api_base: {api_base}\n"
        "    api_key: local\n"
        "environment:\n"
        f"  cwd: {repo}\n"
    )
    argv = [
        str(install_peer("mini") / "mini"),
        *("--config", "mini_textbased.yaml", "--config", str(config)),
        *("--task", intent, "--yolo", "--exit-immediately"),
        *("--output", str(run_dir / "mini.traj.json")),
    ]
    env = base_env(run_dir) | {"MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors"}
    return Launch(argv, env, repo)


def sf_launch(
    repo: Path, intent: str, model: str, api_base: str, run_dir: Path, cap: float
) -> Launch:
    """SF headless, as a team would run it in CI: the intent planned and built
    unattended under the trusted profile, its own ``--timeout`` at the cap."""
    answers = run_dir / "answers.yaml"
    answers.write_text(UNATTENDED)
    env = {**os.environ, **sf_env(), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    for mode in ("FAST", "SMART", "DEEP"):
        env |= {f"SF_MODEL_{mode}": f"openai/{model}", f"SF_MODEL_{mode}_API_BASE": api_base}
    argv = [
        *(sys.executable, str(ROOT / "manage.py"), "sf", "headless"),
        *("--project", str(repo), "--intent", intent, "--autonomous"),
        *("--permission-profile", "trusted", "--answers", str(answers)),
        *("--output-format", "stream-json", "--timeout", f"{cap:g}"),
    ]
    return Launch(argv, env, ROOT)


def sf_env() -> dict[str, str]:
    """The team-mode settings scripts/setup.sh wrote (.sf/env), for the headless process."""
    found: dict[str, str] = {}
    env_file = ROOT / ".sf" / "env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            name, sep, value = line.partition("=")
            if sep and not name.startswith("#"):
                found[name.strip()] = value
    return found


LAUNCHERS = {"sf": sf_launch, "mini": mini_launch, "aider": aider_launch}


def run_capped(launch: Launch, cap: float, log: Path) -> Ended:
    """Run to the end or to the cap: SIGTERM to the whole process group at ``cap``,
    SIGKILL ``KILL_GRACE`` seconds later."""
    started = time.monotonic()
    with log.open("wb") as out:
        process = start(
            launch.argv,
            cwd=launch.cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            own_group=True,
        )
        try:
            code: int | None = process.wait(timeout=cap)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
            _signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
    _signal_group(process.pid, signal.SIGKILL)  # whatever it left behind
    return Ended(code, time.monotonic() - started, timed_out)


def _signal_group(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, number)
