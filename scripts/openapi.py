"""Print the API's OpenAPI document, or refresh the committed copy with ``--write``.

python scripts/openapi.py --write   # docs/openapi.json, checked by api_app's contract test
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "openapi.json"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")
    import django

    django.setup()
    from api_app.api import openapi_text

    text = openapi_text()
    if "--write" in argv:
        COMMITTED.write_text(text)
        print(f"wrote {COMMITTED.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
