"""Hidden grader of the countlines-flag task: run in a copy of the final state."""

import sys
import tempfile

from _grading import finish, run

with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as sample:
    sample.write("one\n\n   \ntwo\n\tthree\n")
plain = run([sys.executable, "countlines.py", sample.name])
flagged = run([sys.executable, "countlines.py", "--non-empty", sample.name])
results = [
    (plain.stdout.strip() == "5", f"without the flag: {plain.stdout!r} {plain.stderr[-300:]!r}"),
    (flagged.stdout.strip() == "3", f"--non-empty: {flagged.stdout!r} {flagged.stderr[-300:]!r}"),
]
finish(results)
