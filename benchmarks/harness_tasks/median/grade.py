"""Hidden grader of the median task: run in a copy of the final state."""

from _grading import check_python, finish, mentions, pytest_passes

results = [
    check_python(
        "import pytest\n"
        "from stats import mean, median\n"
        "assert median([5]) == 5\n"
        "assert median([3, 1, 2]) == 2\n"
        "assert median([4, 1, 3, 2]) == 2.5\n"
        "assert median([10, -1, 7, 7]) == 7\n"
        "assert mean([1, 3]) == 2\n"
        "with pytest.raises(ValueError):\n"
        "    median([])\n"
    ),
    mentions("test_stats.py", "median"),
    pytest_passes(),
]
finish(results)
