"""Hidden grader of the leap-year task: run in a copy of the final state."""

from _grading import check_python, finish, mentions, pytest_passes

results = [
    check_python(
        "from calendar_utils import days_in_month, is_leap_year\n"
        "assert is_leap_year(2000) and is_leap_year(1996)\n"
        "assert not is_leap_year(1900) and not is_leap_year(2100) and not is_leap_year(2023)\n"
        "assert days_in_month(2024, 2) == 29 and days_in_month(1900, 2) == 28\n"
        "assert days_in_month(2023, 12) == 31 and days_in_month(2023, 9) == 30\n"
    ),
    mentions("test_calendar_utils.py", "is_leap_year"),
    pytest_passes(),
]
finish(results)
