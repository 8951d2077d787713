"""Hidden grader of the paginate-bug task: run in a copy of the final state."""

from _grading import check_python, finish, pytest_passes, unchanged

results = [
    unchanged("tests/test_paginate.py"),
    check_python(
        "from paginate import page, page_count\n"
        "items = list(range(7))\n"
        "assert page(items, 1, 3) == [0, 1, 2]\n"
        "assert page(items, 2, 3) == [3, 4, 5]\n"
        "assert page(items, 3, 3) == [6]\n"
        "assert page(items, 4, 3) == []\n"
        "assert page_count(items, 3) == 3\n"
    ),
    pytest_passes(),
]
finish(results)
