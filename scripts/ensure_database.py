"""Create the database DATABASE_URL names if it does not exist yet (set-up helper)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from psycopg import sql

from sf_core.env import parse_database_url


def main() -> int:
    url = parse_database_url("DATABASE_URL", os.environ["DATABASE_URL"])
    params = {
        "dbname": "postgres",
        "user": url.user or None,
        "password": url.password or None,
        "host": url.host or None,
        "port": url.port,
        "autocommit": True,
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v is not None}) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (url.name,)
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(url.name)))
            print(f"[setup] created database {url.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
