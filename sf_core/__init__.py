"""The shared kernel: what every app of SF uses and that knows none of them.

Business errors (``errors``), live broadcasts and the names of every channel group
(``live``), announcements between apps sent on commit (``signals``), who acted
(``actors``), git, typed environment readers (``env``), request typing (``http``),
the base of ``manage.py sf`` subcommands (``cli``) and of live websocket consumers
(``consumers``). It imports no app: ``tests/test_architecture.py`` fails if it does.
"""
