"""The side-by-side benchmark's instrument, without a model: every hidden grader fails on
its task's initial repository and passes with the reference solution, the counting
proxy measures calls and tokens from the server's answers (streamed or not), and SF's
failures are classified from what SF recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import (  # noqa: F401 - fixture
    FakeProvider,
    fake_provider,
    openai_text,
    server_error,
)

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _harness_proxy import CountingProxy  # noqa: E402
from _harness_sf import classify  # noqa: E402


def test_smoke_proves_every_grader() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "harness_compare.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["tasks"] >= 10
    assert figures["proven"] == figures["tasks"]


def test_smoke_refuses_an_unknown_task() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "harness_compare.py"), "--smoke", "--tasks", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "unknown task(s) ['nope']" in done.stderr


def _post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        f"{url}/v1/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return bytes(answer.read())


def test_proxy_counts_usage_of_plain_and_streamed_answers(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(openai_text("hi"), openai_text("streamed hello"), server_error())
    messages = [{"role": "user", "content": "hello"}]
    with CountingProxy(fake_provider.url) as proxy:
        plain = json.loads(_post(proxy.url, {"model": "m", "messages": messages}))
        streamed = _post(
            proxy.url,
            {
                "model": "m",
                "messages": messages,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(proxy.url, {"model": "m", "messages": messages})
    assert plain["choices"][0]["message"]["content"] == "hi"
    assert b"data: [DONE]" in streamed  # relayed as it came
    assert refused.value.code == 500
    refused.value.close()
    assert proxy.counts.as_dict() == {
        "calls": 3,
        "prompt_tokens": 40,  # 20 each from the two answers' usage; none in the error
        "completion_tokens": 10,
        "prompt_evaluated": 0,
        "failed_calls": 1,
    }
    assert fake_provider.requests[1].body["stream_options"] == {"include_usage": True}


def test_proxy_takes_llama_cpp_timings_when_there_is_no_usage() -> None:
    from _harness_proxy import Usage

    usage = Usage()
    chunk = {"choices": [], "timings": {"prompt_n": 12, "cache_n": 30, "predicted_n": 7}}
    text = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    usage.feed_stream(text[:25])  # a chunk boundary inside the JSON
    usage.feed_stream(text[25:])
    assert (usage.prompt, usage.completion, usage.evaluated) == (42, 7, 12)


@pytest.mark.parametrize(
    ("units", "text", "timed_out", "cause"),
    [
        (0, "", False, "planning"),
        (0, "", True, "planning"),
        (2, "unit failed: x\nverify: not run: the gate says ask", False, "gate refusal"),
        (
            1,
            "unit failed: x\nverify: bash: pytset: command not found",
            False,
            "verify misconfigured",
        ),
        (1, "note: tool call in the text refused: unknown tool 'bash'", False, "tool-call format"),
        (1, 'tool_call read_file: {"output": "src/a.py: no such file"}', False, "wrong path"),
        (
            1,
            "tool_call edit_file: `search` must be text already in the file",
            False,
            "edit mismatch",
        ),
        (1, "tool_call edit_file: `search` must be text already in the file", True, "timeout"),
        (1, "unit failed: the tests failed", False, "other"),
    ],
)
def test_sf_failures_are_classified(units: int, text: str, timed_out: bool, cause: str) -> None:
    failure = classify(units, text, {"status": "error", "reason": "r"}, timed_out)
    assert failure["cause"] == cause


def test_last_change_is_measured_from_the_first_commit(tmp_path: Path) -> None:
    from _harness_tasks import git, last_change_s, make_repo, pick

    repo = make_repo(pick("config-port")[0], tmp_path / "repo")
    assert last_change_s(repo, None) is None  # the template's files are older
    assert last_change_s(repo, "main") is None  # no commit after the first
    started = float(git(repo, "log", "-1", "--format=%ct"))
    (repo / "config.ini").write_text("[server]\nport = 9090\n")
    os.utime(repo / "config.ini", (started + 42, started + 42))
    (repo / ".aider.tags.cache.v4").mkdir()
    (repo / ".aider.tags.cache.v4" / "cache.db").write_text("not an answer")
    assert last_change_s(repo, None) == 42.0
    git(repo, "commit", "-qam", "answer", f"--date=@{int(started) + 7}")
    later = {**os.environ, "GIT_COMMITTER_DATE": f"@{int(started) + 7}"}
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit"], cwd=repo, env=later, check=True)
    assert last_change_s(repo, "main") == 7.0
