"""Hidden grader of the slugify task: run in a copy of the final state."""

from _grading import check_python, finish, mentions, pytest_passes

results = [
    check_python(
        "from textkit.case import slugify, title_case\n"
        "assert slugify('Hello, World!') == 'hello-world'\n"
        "assert slugify('  Many   spaces -- here ') == 'many-spaces-here'\n"
        "assert slugify('Version 2.0 is OUT') == 'version-2-0-is-out'\n"
        "assert slugify('---') == ''\n"
        "assert title_case('a b') == 'A B'\n"
    ),
    mentions("tests/test_case.py", "slugify"),
    pytest_passes(),
]
finish(results)
