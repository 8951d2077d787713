"""Hidden grader of the config-port task: run in a copy of the final state."""

from _grading import check_python, finish, unchanged

results = [
    check_python(
        "import configparser\n"
        "config = configparser.ConfigParser()\n"
        "assert config.read('config.ini') == ['config.ini']\n"
        "assert config['server']['port'] == '9090'\n"
        "assert config['server']['workers'] == '4'\n"
        "assert config['server']['host'] == '127.0.0.1'\n"
        "assert config['logging']['level'] == 'DEBUG'\n"
    ),
    unchanged("app.py"),
]
finish(results)
