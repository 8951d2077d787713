"""Native module against its peers, side by side in one run (medians of several runs).

- grep over a large real tree (the virtualenv's site-packages) against ripgrep and
  against plain Python (``os.walk`` + ``re``), with the same semantics: every file,
  hidden ones too, no ignore files, binary files skipped; the match counts are
  printed so that the comparison can be checked;
- redaction throughput against SF's own rules in Python ``re``
  (``native/tests/redact_reference.py``, the tests' oracle): ours with gitleaks' rule
  set on top (what SF runs), and ours with the same rules only;
- a unified diff of a 10,000-line file (real Python source) with 1 % changed lines
  against ``difflib.unified_diff``;
- ``canonical_hash`` against ``json.dumps(sort_keys=True)`` + ``hashlib.sha256``.

Prints one line per comparison; the last line is JSON with speed-up factors (peer
time divided by ours; above 1 means sf_native is faster). Run:

    .venv/bin/python benchmarks/native.py [--runs 5] [--tree PATH]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from _common import ROOT, median_seconds, parse_args, report

import sf_native

sys.path.insert(0, str(ROOT / "native" / "tests"))
import redact_reference
from redaction_corpus import NEAR_MISSES, SAMPLES

GREP_PATTERN = r"def [a-z_]+_handler\("


def python_grep(root: str, pattern: str) -> int:
    """Plain Python: walk every file, skip binary ones, count matching lines."""
    regex = re.compile(pattern)
    count = 0
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if b"\x00" in data:
                continue
            for line in data.decode("utf-8", "replace").splitlines():
                if regex.search(line):
                    count += 1
    return count


def ripgrep(root: str, pattern: str, *, count: bool) -> int:
    args = ["rg", "--no-ignore", "--hidden", "--no-config", "--no-messages"]
    args += ["--count", pattern, root] if count else ["-n", "--no-heading", pattern, root]
    if not count:  # the timed run: rg formats every matching line, as ours builds records
        subprocess.run(args, stdout=subprocess.DEVNULL, check=False)
        return 0
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    return sum(int(line.rsplit(":", 1)[1]) for line in done.stdout.splitlines())


def bench_grep(tree: str, runs: int) -> tuple[float, float]:
    def ours() -> int:
        return len(sf_native.grep(tree, GREP_PATTERN, hidden=True, ignore_files=False))

    ours_count = ours()
    rg_count = ripgrep(tree, GREP_PATTERN, count=True)
    python_count = python_grep(tree, GREP_PATTERN)
    ours_s = median_seconds(ours, runs=runs)
    rg_s = median_seconds(lambda: ripgrep(tree, GREP_PATTERN, count=False), runs=runs)
    python_s = median_seconds(
        lambda: python_grep(tree, GREP_PATTERN), runs=max(1, runs // 2), warmup=0
    )
    print(
        f"grep {tree}: ours {ours_s:.3f} s ({ours_count} lines)  ripgrep {rg_s:.3f} s "
        f"({rg_count} lines)  python {python_s:.3f} s ({python_count} lines)"
    )
    if not (ours_count == rg_count == python_count):
        print("  !! the three disagree on the match count; compare with care")
    return rg_s / ours_s, python_s / ours_s


def redaction_text(size: int) -> str:
    rng = random.Random(11)
    filler = [
        "2026-11-23 05:00:00 INFO request handled in 12 ms path=/api/tasks status=200",
        "    return self.session.execute(query, params)",
        "export PATH=/usr/local/bin:$PATH",
        "DEBUG cache miss for key user:42:profile",
        *NEAR_MISSES,
    ]
    secrets = [text for _, _, text in SAMPLES]
    lines = []
    total = 0
    while total < size:
        line = rng.choice(secrets) if rng.random() < 0.02 else rng.choice(filler)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def bench_redact(runs: int, size: int = 4_000_000) -> tuple[float, float]:
    """Ours with gitleaks' rule set and SF's own, and ours with SF's own only (the
    reference's rules, identical output asserted), each against the reference."""
    text = redaction_text(size)
    ours_s = median_seconds(lambda: sf_native.redact(text), runs=runs)
    own_s = median_seconds(lambda: sf_native.redact(text, gitleaks=False), runs=runs)
    # One pass of the Rust core alone: what the second look (redacting the redacted
    # text again, for idempotence) costs on text that holds secrets.
    one_pass_s = median_seconds(lambda: sf_native._core.redact(text, []), runs=runs)
    python_s = median_seconds(lambda: redact_reference.redact(text), runs=max(1, runs // 2))
    assert sf_native.redact(text, gitleaks=False).text == redact_reference.redact(text)[0]
    megabytes = len(text.encode()) / 1e6
    print(
        f"redact {megabytes:.1f} MB: ours {ours_s * 1000:.1f} ms ({megabytes / ours_s:.0f} MB/s), "
        f"of which one pass {one_pass_s * 1000:.1f} ms; SF's own rules only "
        f"{own_s * 1000:.1f} ms; python re (SF's own rules) {python_s * 1000:.1f} ms "
        f"({megabytes / python_s:.1f} MB/s)"
    )
    return python_s / ours_s, python_s / own_s


def source_lines(count: int) -> list[str]:
    """The first ``count`` lines of real Python source (Django's ORM, installed with SF):
    blank lines, repeated ``return`` and ``self.`` lines, as in a real file."""
    import django

    lines: list[str] = []
    for path in sorted((Path(django.__file__).parent / "db" / "models").rglob("*.py")):
        lines += path.read_text(encoding="utf-8").splitlines(keepends=True)
        if len(lines) >= count:
            break
    return lines[:count]


def bench_diff(runs: int) -> float:
    rng = random.Random(5)
    old = source_lines(10_000)
    new = list(old)
    for n in rng.sample(range(len(old)), len(old) // 100):  # 1 % of the lines change
        new[n] = new[n].rstrip("\n") + "  # changed\n"
    old_text, new_text = "".join(old), "".join(new)
    ours_s = median_seconds(lambda: sf_native.unified_diff(old_text, new_text), runs=runs)
    python_s = median_seconds(lambda: "".join(difflib.unified_diff(old, new, "a", "b")), runs=runs)
    stats = sf_native.diff_stats(old_text, new_text)
    print(
        f"diff 10,000 lines of Django source, 100 changed: ours {ours_s * 1000:.2f} ms "
        f"({stats.hunks} hunks)  difflib {python_s * 1000:.2f} ms"
    )
    return python_s / ours_s


def sample_document(seed: int, size: int) -> dict[str, object]:
    rng = random.Random(seed)
    return {
        f"key-{rng.randrange(10**6)}": {
            "tool": rng.choice(["read_file", "run_command", "edit_file"]),
            "input": {"path": f"src/module_{i}.py", "line": i, "ratio": rng.random()},
            "tags": [rng.choice("abcdef") * 3 for _ in range(4)],
        }
        for i in range(size)
    }


def bench_hash(runs: int) -> float:
    document = sample_document(7, 2_000)

    def python_way() -> str:
        text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    ours = median_seconds(lambda: sf_native.canonical_hash(document), runs=runs)
    peer = median_seconds(python_way, runs=runs)
    print(f"canonical_hash  ours {ours * 1000:.2f} ms  json+hashlib {peer * 1000:.2f} ms")
    return peer / ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--redact-bytes", type=int, default=4_000_000)
    smoke = {"runs": 1, "tree": str(ROOT / "benchmarks"), "redact_bytes": 20_000}
    args = parse_args(parser, smoke=smoke)
    if shutil.which("rg") is None:
        raise SystemExit("ripgrep (rg) is needed: scripts/setup.sh --with-test-tools installs it")
    grep_vs_ripgrep, grep_vs_python = bench_grep(args.tree, args.runs)
    redact_vs_python, redact_own_vs_python = bench_redact(args.runs, args.redact_bytes)
    report(
        {
            "grep_vs_ripgrep": round(grep_vs_ripgrep, 2),
            "grep_vs_python": round(grep_vs_python, 1),
            "redact_vs_python": round(redact_vs_python, 1),
            "redact_own_rules_vs_python": round(redact_own_vs_python, 1),
            "diff_vs_difflib": round(bench_diff(args.runs), 1),
            "hash_vs_python": round(bench_hash(args.runs * 3), 2),
        }
    )


if __name__ == "__main__":
    main()
