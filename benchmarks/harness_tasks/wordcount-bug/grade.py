"""Hidden grader of the wordcount-bug task: run in a copy of the final state."""

from _grading import check_python, finish, pytest_passes, unchanged

results = [
    unchanged("test_words.py"),
    check_python(
        "from words import word_count\n"
        "assert word_count('a\\tb\\n\\nc') == 3\n"
        "assert word_count('   ') == 0\n"
        "assert word_count('word') == 1\n"
    ),
    pytest_passes(),
]
finish(results)
