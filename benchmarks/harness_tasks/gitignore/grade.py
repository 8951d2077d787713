"""Hidden grader of the gitignore task: run in a copy of the final state."""

from _grading import finish, ignored

results = [
    ignored(
        "__pycache__/x.pyc",
        "pkg/__pycache__/y.pyc",
        "build/a.o",
        "dist/b.whl",
        "run.log",
        "logs/x.log",
        yes=True,
    ),
    ignored("main.py", "README.md", "notes.txt", "logbook.py", yes=False),
]
finish(results)
