"""Hidden grader of the duration-bug task: run in a copy of the final state."""

from _grading import check_python, finish, pytest_passes, unchanged

results = [
    unchanged("tests/test_durations.py"),
    check_python(
        "import pytest\n"
        "from timeparse.durations import parse_duration\n"
        "assert parse_duration('2m') == 120\n"
        "assert parse_duration('1h1m1s') == 3661\n"
        "assert parse_duration('3h') == 10800\n"
        "with pytest.raises(ValueError):\n"
        "    parse_duration('1x')\n"
    ),
    pytest_passes(),
]
finish(results)
