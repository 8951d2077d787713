"""Loaded with ``-p tests.environment`` before pytest-django reads the settings.

The suite runs in team mode against real services: PostgreSQL through
``DATABASE_URL`` and Redis through ``REDIS_URL`` (its own database number, so a
running SF on the same Redis is left alone). Anything already set wins.
"""

from __future__ import annotations

import os
import tempfile

# Never a developer's .sf/env: the suite's settings are the ones below.
os.environ.setdefault("SF_ENV_FILE", "")

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sf")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/9")
os.environ.setdefault("SF_CHANNELS_PREFIX", "sf-test")
os.environ.setdefault("SF_CELERY_QUEUE", "sf-test")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Threads of database_sync_to_async must not keep connections that block teardown.
os.environ.setdefault("SF_DB_CONN_MAX_AGE", "0")
# Tests look at a page right after changing what it shows, in the same process: the web's
# one-second shared render (sf_core/microcache.py) has tests of its own that turn it on.
os.environ.setdefault("SF_PAGE_CACHE", "0")
# Worktrees and other data of this run live apart from a developer's .sf/.
os.environ.setdefault("SF_DATA_DIR", tempfile.mkdtemp(prefix="sf-test-data-"))

# pytest-xdist: each worker (gw0, gw1, ...) gets its own Celery queue, channel-layer
# (and Redis key) prefix and data folder; pytest-django already gives it its own
# database (test_<name>_gw0). Workers inherit the controller's environment, so the
# names above are extended here, in the worker, before Django reads them.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER and not os.environ.get("SF_TEST_WORKER_NAMES"):
    os.environ["SF_TEST_WORKER_NAMES"] = WORKER  # once: not again in a child process
    for name in ("SF_CELERY_QUEUE", "SF_CHANNELS_PREFIX"):
        os.environ[name] = f"{os.environ[name]}-{WORKER}"
    data = os.path.join(os.environ["SF_DATA_DIR"], WORKER)
    os.makedirs(data, exist_ok=True)
    os.environ["SF_DATA_DIR"] = data
