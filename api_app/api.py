"""The API object: django-ninja on the project's pydantic models.

django-ninja was chosen because SF's schemas are already pydantic (ninja's ``Schema``
is a pydantic model), it writes the OpenAPI 3 document from the type hints, runs on
plain Django views (the project's middleware, settings and test client apply) and
supports Django 5.2. Every route needs a bearer token (``TokenAuth``).
"""

from __future__ import annotations

import json
from typing import Any

from ninja import NinjaAPI

from api_app.auth import TokenAuth
from api_app.problems import problems_install
from api_app.routes.schedules import router as schedules_router
from api_app.routes.sessions import router as sessions_router
from api_app.routes.work import router as work_router

api = NinjaAPI(
    title="SF API",
    version="1",
    description=(
        "Intent → plan → tasks → verified merges. Authenticate with "
        "`Authorization: Bearer sf_…` (tokens are made on /profile/tokens/). Errors are "
        "RFC 9457 problem+json with a stable `code`. Creating calls accept an "
        "`Idempotency-Key` header. Lists take `limit` (at most 100) and `offset`."
    ),
    auth=TokenAuth(),
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
)
problems_install(api)
api.add_router("", sessions_router)
api.add_router("", work_router)
api.add_router("", schedules_router)


def openapi_document() -> dict[str, Any]:
    return dict(api.get_openapi_schema(path_prefix="/api"))


def openapi_text() -> str:
    """The committed form of the document (docs/openapi.json): sorted, indented."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
