"""Native module against its peers, side by side in one run (medians of several runs).

Prints one line per comparison; the last line is JSON with speed-up factors
(peer time divided by ours; above 1 means sf_native is faster).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random

from _common import median_seconds, report

import sf_native


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
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    report({"hash_vs_python": round(bench_hash(args.runs), 2)})


if __name__ == "__main__":
    main()
