"""Writes examples/demo-trace.jsonl: SF's offline demo trace, written by hand.

No live model can be reached from the machines SF is built on, so this trace is a
hand-written fixture, not a recording: the model steps below are what a model would
plausibly answer for the task in examples/plan.yaml. Replaying it, the tool calls
are executed for real in a worktree of examples/sample-repo, and the verify
commands really run. Input hashes are computed exactly as the agent loop does, so
run this script again after changing a step:

    .venv/bin/python examples/build_demo_trace.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

import django  # noqa: E402

django.setup()

import sf_native  # noqa: E402
from agents_app.gate.normalize import normalize_input  # noqa: E402
from agents_app.gate.schemas import ToolCall  # noqa: E402
from agents_app.runtime.replay import TRACE_FORMAT  # noqa: E402
from agents_app.runtime.tools import TOOLS  # noqa: E402

NEW_MAIN = """    parser.add_argument("name")
    parser.add_argument("--shout", action="store_true", help="print the greeting in capitals")
    args = parser.parse_args(argv)
    greeting = greet(args.name)
    print(greeting.upper() if args.shout else greeting)"""

NEW_TESTS = """import contextlib
import io
import unittest

from greet import greet, main


class GreetTest(unittest.TestCase):
    def test_it_greets_by_name(self) -> None:
        self.assertEqual(greet("Ada"), "Hello, Ada!")

    def test_it_shouts_when_asked(self) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["--shout", "Ada"])
        self.assertEqual(out.getvalue(), "HELLO, ADA!\\n")

    def test_it_speaks_normally_by_default(self) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["Ada"])
        self.assertEqual(out.getvalue(), "Hello, Ada!\\n")


if __name__ == "__main__":
    unittest.main()
"""

# (what the model says, the tool it calls, its arguments, the tool's output)
STEPS = [
    ("I'll read the greeter first.", "read_file", {"path": "greet.py"}, "(greet.py)"),
    (
        "I'll add the --shout flag where the arguments are parsed.",
        "edit_file",
        {
            "path": "greet.py",
            "search": '    parser.add_argument("name")\n    args = parser.parse_args(argv)\n'
            "    print(greet(args.name))",
            "replace": NEW_MAIN,
        },
        "edited greet.py lines 12-14 (exact match)",
    ),
    (
        "Now tests for both behaviours.",
        "write_file",
        {"path": "test_greet.py", "content": NEW_TESTS},
        "wrote 710 bytes to test_greet.py",
    ),
    (
        "Running the tests.",
        "run_command",
        {"command": "python3 -m unittest -q"},
        "exit code 0\nRan 3 tests in 0.001s\n\nOK",
    ),
    (
        "Done.",
        "finish",
        {
            "summary": "Added --shout to greet.py (R1: prints HELLO, ADA!; R2: without it the "
            "greeting is unchanged) and tests for both behaviours (R3)."
        },
        "finished",
    ),
]


def build() -> list[dict[str, object]]:
    plan = (ROOT / "examples" / "plan.yaml").read_text()
    records: list[dict[str, object]] = [
        {
            "type": "header",
            "format": TRACE_FORMAT,
            "note": "Hand-written fixture, not a recording of a live model (none is reachable "
            "from SF's build machines). Its tool calls run for real on replay.",
            "plan_yaml": plan,
            "task": "shout-flag",
            "permission_profile": "trusted",
        }
    ]
    for index, (content, tool, arguments, output) in enumerate(STEPS):
        call_id = f"call_{index + 1}"
        records.append(
            {
                "type": "model_step",
                "content": content,
                "tool_calls": [{"id": call_id, "name": tool, "arguments": json.dumps(arguments)}],
                "tokens_in": 900 + 350 * index,
                "tokens_out": 40 + len(json.dumps(arguments)) // 4,
                "cost": 0.0,
            }
        )
        parsed = TOOLS[tool].parse(arguments).model_dump()
        normalized = normalize_input(ToolCall(tool=tool, input=parsed), ROOT)
        records.append(
            {
                "type": "tool_call",
                "name": tool,
                "input": normalized,
                "input_hash": sf_native.canonical_hash({"tool": tool, "input": normalized}),
                "output": output,
            }
        )
    return records


def main() -> None:
    path = ROOT / "examples" / "demo-trace.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in build()))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
