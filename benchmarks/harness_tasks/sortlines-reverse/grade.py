"""Hidden grader of the sortlines-reverse task: run in a copy of the final state."""

import sys

from _grading import finish, run

text = "pear\napple\nfig\napple\n"
cases = [
    ([], "apple\napple\nfig\npear\n"),
    (["--reverse"], "pear\nfig\napple\napple\n"),
    (["--reverse", "--unique"], "pear\nfig\napple\n"),
    (["--unique"], "apple\nfig\npear\n"),
]
results = []
for flags, expected in cases:
    done = run([sys.executable, "sortlines.py", *flags], input=text)
    results.append((done.stdout == expected, f"{flags}: {done.stdout!r} {done.stderr[-300:]!r}"))
finish(results)
