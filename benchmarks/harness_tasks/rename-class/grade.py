"""Hidden grader of the rename-class task: run in a copy of the final state."""

from _grading import check_python, finish, no_word, pytest_passes

results = [
    check_python(
        "from models import Account\n"
        "from store import Store\n"
        "from report import describe\n"
        "store = Store(); store.put(Account('Bo', 'bo@x.org'))\n"
        "assert describe(store.get('bo@x.org')) == 'Bo <bo@x.org>'\n"
    ),
    no_word("UserRecord"),
    pytest_passes(),
]
finish(results)
