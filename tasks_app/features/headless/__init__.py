"""``manage.py sf headless``: the engine for CI and scripts (DESIGN §8).

``events`` holds the event schemas of ``--output-format stream-json``; ``observer``
turns what the engine writes to the database into those events; ``answers`` reads
pre-supplied answers; ``runner`` drives one session to an outcome and its exit code;
``supervisor`` restarts a crashed run with backoff; ``cli`` is the subcommand.
"""
